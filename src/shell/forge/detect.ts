/**
 * Which forge a remote is on (SPEC-0029 REQ-16), with no config key for it (REQ-1 allows none): github.com
 * is GitHub; any other host is asked, without the token, whether it is Gitea or Forgejo
 * (`GET /api/v1/version` answers `{"version": …}`) or GitHub Enterprise Server (`GET /api/v3/meta`
 * answers a JSON object).
 */
import { type Forge, ForgeError } from "./forge.js";
import { giteaForge } from "./gitea.js";
import { githubForge } from "./github.js";
import { call } from "./http.js";
import type { ForgeRemote } from "./remote.js";

export async function detectForge(
  remote: ForgeRemote,
  token: string,
  fetchImpl?: typeof fetch,
): Promise<Forge> {
  const f = fetchImpl === undefined ? {} : { fetch: fetchImpl };
  if (remote.host.toLowerCase() === "github.com")
    return githubForge("https://api.github.com", remote.owner, remote.repo, token, fetchImpl);
  const probe = async (base: string, path: string): Promise<unknown> => {
    try {
      const a = await call({ base, headers: {}, ...f, timeoutMs: 10_000 }, "GET", path, undefined, [404]);
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
  )
    return giteaForge(`${remote.origin}/api/v1`, remote.owner, remote.repo, token, fetchImpl);
  const ghe = await probe(`${remote.origin}/api/v3`, "/meta");
  if (typeof ghe === "object" && ghe !== null)
    return githubForge(`${remote.origin}/api/v3`, remote.owner, remote.repo, token, fetchImpl);
  throw new ForgeError(
    "GET",
    `${remote.origin}/api/v1/version`,
    0,
    `${remote.host} answers neither as Gitea/Forgejo (/api/v1/version) nor as GitHub Enterprise (/api/v3/meta)`,
  );
}
