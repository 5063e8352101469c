/**
 * Which forge a remote is on (SPEC-0029 REQ-16; docs/decisions/0016). github.com is GitHub and
 * gitlab.com is GitLab by their hosts. Any other host is the forge `[policy_repo.<name>] forge` declares,
 * with no probe, or else is asked, without the token, in this order: Gitea or Forgejo (`GET
 * /api/v1/version`, public, answers `{"version": …}`), GitLab (`GET /api/v4/version` needs a token and
 * answers GitLab's own 401 `{"message":"401 Unauthorized"}` without one, `{"version", "revision"}` with
 * one) and GitHub Enterprise Server (`GET /api/v3/meta` answers a JSON object). Gitea goes first because
 * its answer is public and unmistakable; neither GitLab nor GitHub serves `/api/v1`. A declaration that
 * contradicts github.com or gitlab.com is refused. Only GitLab takes a project in nested groups; a
 * remote with more than two path segments elsewhere is refused.
 */
import type { ForgeKind } from "../config/global-config.js";
import { type Forge, ForgeError } from "./forge.js";
import { giteaForge } from "./gitea.js";
import { githubForge } from "./github.js";
import { gitlabForge } from "./gitlab.js";
import { call } from "./http.js";
import { type ForgeRemote, ForgeRemoteError } from "./remote.js";

export interface DetectOptions {
  /** `forge` in the policy repo's declaration: trusted, so nothing is probed. */
  readonly declared?: ForgeKind | undefined;
  /** The client's `fetch` (tests hand one that trusts their forge's certificate). */
  readonly fetch?: typeof fetch | undefined;
}

const NAMES: Record<ForgeKind, string> = { github: "GitHub", gitea: "Gitea/Forgejo", gitlab: "GitLab" };

export async function detectForge(
  remote: ForgeRemote,
  token: string,
  options: DetectOptions = {},
): Promise<Forge> {
  const host = remote.host.toLowerCase();
  const byHost: ForgeKind | undefined =
    host === "github.com" ? "github" : host === "gitlab.com" ? "gitlab" : undefined;
  const { declared } = options;
  if (declared !== undefined && byHost !== undefined && declared !== byHost)
    throw new ForgeRemoteError(
      remote.httpsUrl,
      `forge = "${declared}" is declared, but ${host} is ${NAMES[byHost]}`,
    );
  const kind = byHost ?? declared ?? (await probe(remote, options.fetch));
  return forgeOf(kind, remote, token, options.fetch);
}

function forgeOf(kind: ForgeKind, remote: ForgeRemote, token: string, fetchImpl?: typeof fetch): Forge {
  if (kind === "gitlab")
    return gitlabForge(`${remote.origin}/api/v4`, `${remote.owner}/${remote.repo}`, token, fetchImpl);
  if (remote.owner.includes("/"))
    throw new ForgeRemoteError(
      remote.httpsUrl,
      `the path is not <owner>/<repo>: only GitLab has nested groups, and ${remote.host} is ${NAMES[kind]}`,
    );
  if (kind === "gitea")
    return giteaForge(`${remote.origin}/api/v1`, remote.owner, remote.repo, token, fetchImpl);
  const api =
    remote.host.toLowerCase() === "github.com" ? "https://api.github.com" : `${remote.origin}/api/v3`;
  return githubForge(api, remote.owner, remote.repo, token, fetchImpl);
}

async function probe(remote: ForgeRemote, fetchImpl?: typeof fetch): Promise<ForgeKind> {
  const f = fetchImpl === undefined ? {} : { fetch: fetchImpl };
  const ask = async (api: string, path: string, accept: readonly number[] = []): Promise<unknown> => {
    try {
      const a = await call(
        { base: `${remote.origin}${api}`, headers: {}, ...f, timeoutMs: 10_000 },
        "GET",
        path,
        undefined,
        [404, ...accept],
      );
      return a.status === 404 ? undefined : a.body;
    } catch (e) {
      if (e instanceof ForgeError && e.status !== 0) return undefined;
      throw e;
    }
  };
  const gitea = (await ask("/api/v1", "/version")) as { version?: unknown } | null | undefined;
  if (typeof gitea === "object" && gitea !== null && typeof gitea.version === "string") return "gitea";
  const lab = (await ask("/api/v4", "/version", [401])) as Record<string, unknown> | null | undefined;
  if (
    typeof lab === "object" &&
    lab !== null &&
    (lab.message === "401 Unauthorized" ||
      (typeof lab.version === "string" && typeof lab.revision === "string"))
  )
    return "gitlab";
  const ghe = await ask("/api/v3", "/meta");
  if (typeof ghe === "object" && ghe !== null) return "github";
  throw new ForgeError(
    "GET",
    `${remote.origin}/api/v1/version`,
    0,
    `${remote.host} answers neither as Gitea/Forgejo (/api/v1/version), GitLab (/api/v4/version) nor GitHub Enterprise (/api/v3/meta); declare it with forge = "github", "gitea" or "gitlab" in its [policy_repo.<name>]`,
  );
}
