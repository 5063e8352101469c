/**
 * Which forge a remote is on (SPEC-0029 REQ-16), with no config key for it (REQ-1 allows none):
 * github.com is GitHub and gitlab.com is GitLab; any other host is asked, without the token, whether it
 * is Gitea or Forgejo (`GET /api/v1/version` answers `{"version": …}`), GitLab (`GET /api/v4/version`
 * answers the version, or, without a token, GitLab's own `{"message":"401 Unauthorized"}`) or GitHub
 * Enterprise Server (`GET /api/v3/meta` answers a JSON object). Only GitLab takes a project in nested
 * groups; a remote with more than two path segments elsewhere is refused.
 */
import { type Forge, ForgeError } from "./forge.js";
import { giteaForge } from "./gitea.js";
import { githubForge } from "./github.js";
import { gitlabForge } from "./gitlab.js";
import { call } from "./http.js";
import { type ForgeRemote, ForgeRemoteError } from "./remote.js";

export async function detectForge(
  remote: ForgeRemote,
  token: string,
  fetchImpl?: typeof fetch,
): Promise<Forge> {
  const f = fetchImpl === undefined ? {} : { fetch: fetchImpl };
  const host = remote.host.toLowerCase();
  const gitlab = (base: string) => gitlabForge(base, `${remote.owner}/${remote.repo}`, token, fetchImpl);
  const twoSegments = () => {
    if (remote.owner.includes("/"))
      throw new ForgeRemoteError(
        remote.httpsUrl,
        `the path is not <owner>/<repo>: only GitLab has nested groups, and ${remote.host} is not GitLab`,
      );
  };
  if (host === "gitlab.com") return gitlab("https://gitlab.com/api/v4");
  if (host === "github.com") {
    twoSegments();
    return githubForge("https://api.github.com", remote.owner, remote.repo, token, fetchImpl);
  }
  const probe = async (base: string, path: string, accept: readonly number[] = []): Promise<unknown> => {
    try {
      const a = await call({ base, headers: {}, ...f, timeoutMs: 10_000 }, "GET", path, undefined, [
        404,
        ...accept,
      ]);
      return a.status === 404 ? undefined : a.body;
    } catch (e) {
      if (e instanceof ForgeError && e.status !== 0) return undefined;
      throw e;
    }
  };
  const gitea = await probe(`${remote.origin}/api/v1`, "/version");
  if (
    typeof gitea === "object" &&
    gitea !== null &&
    typeof (gitea as { version?: unknown }).version === "string"
  ) {
    twoSegments();
    return giteaForge(`${remote.origin}/api/v1`, remote.owner, remote.repo, token, fetchImpl);
  }
  const lab = (await probe(`${remote.origin}/api/v4`, "/version", [401])) as {
    version?: unknown;
    message?: unknown;
  } | null;
  if (
    typeof lab === "object" &&
    lab !== null &&
    (typeof lab.version === "string" || lab.message === "401 Unauthorized")
  )
    return gitlab(`${remote.origin}/api/v4`);
  const ghe = await probe(`${remote.origin}/api/v3`, "/meta");
  if (typeof ghe === "object" && ghe !== null) {
    twoSegments();
    return githubForge(`${remote.origin}/api/v3`, remote.owner, remote.repo, token, fetchImpl);
  }
  throw new ForgeError(
    "GET",
    `${remote.origin}/api/v1/version`,
    0,
    `${remote.host} answers neither as Gitea/Forgejo (/api/v1/version), GitLab (/api/v4/version) nor GitHub Enterprise (/api/v3/meta)`,
  );
}
