/**
 * GitHub's REST API (docs.github.com/rest): `Authorization: Bearer <token>`, the API version pinned by
 * `X-GitHub-Api-Version`, lists paged by `per_page`/`page`, pulls narrowed by `head=<owner>:<branch>`,
 * labels given by name. github.com answers at api.github.com, GitHub Enterprise Server at `/api/v3`.
 */
import type { ForgeHttp } from "./http.js";
import { type Dialect, RestForge } from "./rest-forge.js";

export const GITHUB_API_VERSION = "2022-11-28";

const GITHUB: Dialect = {
  kind: "github",
  page: (n, size) => `per_page=${size}&page=${n}`,
  pageSize: 100,
  headQuery: (owner, head) => `head=${encodeURIComponent(`${owner}:${head}`)}`,
  labelsBody: async (_forge, labels) => ({ labels }),
};

export function githubForge(
  base: string,
  owner: string,
  repo: string,
  token: string,
  fetchImpl?: typeof fetch,
): RestForge {
  const http: ForgeHttp = {
    base,
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": GITHUB_API_VERSION,
      "user-agent": "harness-rules",
    },
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  };
  return new RestForge(http, owner, repo, GITHUB);
}
