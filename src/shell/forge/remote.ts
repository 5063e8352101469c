/**
 * Where a policy repo's remote lives on its forge (SPEC-0029 REQ-16): the host, the owner and the
 * repository, and the HTTPS address git pushes to. An ssh remote (`git@host:org/repo.git`,
 * `ssh://git@host:22/org/repo.git`) is pushed over the HTTPS address of the same repository on the same
 * host, so the one credential `harness rules propose` holds serves both the API and the push; a file or
 * git:// remote has no forge.
 */

export interface ForgeRemote {
  /** `host` or `host:port`, as in a URL. */
  readonly host: string;
  readonly owner: string;
  readonly repo: string;
  /** `https://<host>/<owner>/<repo>.git`, with no userinfo. */
  readonly httpsUrl: string;
  /** `https://<host>`. */
  readonly origin: string;
}

export class ForgeRemoteError extends Error {
  constructor(
    readonly remote: string,
    reason: string,
  ) {
    super(`remote ${JSON.stringify(remote)} has no forge to propose to: ${reason}`);
    this.name = "ForgeRemoteError";
  }
}

const SCP_LIKE = /^(?:[^@/:]+@)?([^/:]+):(.+)$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

export function forgeRemote(remote: string): ForgeRemote {
  let host: string;
  let repoPath: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(remote)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (!["https", "ssh", "git+ssh", "ssh+git"].includes(scheme))
      throw new ForgeRemoteError(remote, `a ${scheme}:// remote is not on a forge (https or ssh needed)`);
    let url: URL;
    try {
      url = new URL(scheme === "https" ? remote : remote.replace(/^[^:]+:/, "https:"));
    } catch {
      throw new ForgeRemoteError(remote, "not a URL");
    }
    // An ssh port is not the HTTPS port of the same host.
    host = scheme === "https" ? url.host : url.hostname;
    repoPath = decodeURIComponent(url.pathname);
  } else {
    const m = SCP_LIKE.exec(remote);
    if (m === null || remote.startsWith("/"))
      throw new ForgeRemoteError(remote, "a local path is not on a forge (https or ssh needed)");
    host = m[1] as string;
    repoPath = m[2] as string;
  }
  const parts = repoPath
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/, "")
    .split("/");
  if (parts.length !== 2 || !parts.every((p) => SEGMENT.test(p) && p !== "." && p !== ".."))
    throw new ForgeRemoteError(remote, "the path is not <owner>/<repo>");
  const [owner, repo] = parts as [string, string];
  const origin = `https://${host}`;
  return { host, owner, repo, origin, httpsUrl: `${origin}/${owner}/${repo}.git` };
}
