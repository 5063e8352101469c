/**
 * Where a policy repo's remote lives on its forge (SPEC-0029 REQ-16): the host, the owner and the
 * repository, and the HTTPS address git pushes to. An ssh remote (`git@host:org/repo.git`,
 * `ssh://git@host:22/org/repo.git`) is pushed over the HTTPS address of the same repository on the same
 * host, so the one credential `harness rules propose` holds serves both the API and the push; a file or
 * git:// remote has no forge. Plain `http://` is refused except to a loopback address (`isLoopbackHttp`:
 * the token never leaves the machine), where the forge is served without TLS, as `harness demo`'s is.
 * A path of more than two segments is a GitLab project in nested groups; only GitLab takes one.
 */
import { isLoopbackHttp } from "../config/git-refs.js";

export interface ForgeRemote {
  /** `host` or `host:port`, as in a URL. */
  readonly host: string;
  /** The namespace: a user or organisation, or on GitLab a group path (`group/sub`). */
  readonly owner: string;
  readonly repo: string;
  /** `https://<host>/<owner>/<repo>.git` (`http://` for a loopback forge), with no userinfo. */
  readonly httpsUrl: string;
  /** `https://<host>` (`http://<host>` for a loopback forge). */
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
/** A GitLab project sits at most 20 subgroups deep: a group, 20 subgroups and the project. */
const MAX_SEGMENTS = 22;
const MAX_PATH = 1_000;

export function forgeRemote(remote: string): ForgeRemote {
  let host: string;
  let repoPath: string;
  let web = "https";
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(remote)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (scheme === "http" && !isLoopbackHttp(remote))
      throw new ForgeRemoteError(
        remote,
        "an http:// remote would send the forge token in clear (https needed; http only to 127.0.0.1, localhost or [::1])",
      );
    if (!["https", "http", "ssh", "git+ssh", "ssh+git"].includes(scheme))
      throw new ForgeRemoteError(remote, `a ${scheme}:// remote is not on a forge (https or ssh needed)`);
    const served = scheme === "https" || scheme === "http";
    let url: URL;
    try {
      url = new URL(served ? remote : remote.replace(/^[^:]+:/, "https:"));
    } catch {
      throw new ForgeRemoteError(remote, "not a URL");
    }
    if (scheme === "http") web = "http";
    // An ssh port is not the HTTPS port of the same host.
    host = served ? url.host : url.hostname;
    repoPath = decodeURIComponent(url.pathname);
  } else {
    const m = SCP_LIKE.exec(remote);
    if (m === null || remote.startsWith("/"))
      throw new ForgeRemoteError(remote, "a local path is not on a forge (https or ssh needed)");
    host = m[1] as string;
    repoPath = m[2] as string;
  }
  if (repoPath.length > MAX_PATH)
    throw new ForgeRemoteError(remote, `the path is over ${MAX_PATH} characters`);
  const parts = repoPath
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/, "")
    .split("/");
  // Two segments on GitHub and Gitea; GitLab's nested groups make more (`detect.ts` holds the others to two).
  if (
    parts.length < 2 ||
    parts.length > MAX_SEGMENTS ||
    !parts.every((p) => SEGMENT.test(p) && p !== "." && p !== "..")
  )
    throw new ForgeRemoteError(remote, "the path is not <owner>/<repo> (or <group>/<subgroup>/…/<project>)");
  const repo = parts.pop() as string;
  const owner = parts.join("/");
  const origin = `${web}://${host}`;
  return { host, owner, repo, origin, httpsUrl: `${origin}/${owner}/${repo}.git` };
}
