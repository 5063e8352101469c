/**
 * Gitea's and Forgejo's API (`/api/v1`, the swagger each serves at /api/swagger):
 * `Authorization: token <token>`, lists paged by `limit`/`page` (50 a page at most by default), no
 * head filter on the list of pulls (the client filters), labels given by id.
 */
import { ForgeError } from "./forge.js";
import type { ForgeHttp } from "./http.js";
import { type Dialect, RestForge } from "./rest-forge.js";

const GITEA: Dialect = {
  kind: "gitea",
  page: (n, size) => `limit=${size}&page=${n}`,
  pageSize: 50,
  headQuery: () => "sort=recentupdate",
  labelsBody: async (forge, labels) => {
    const ids = await forge.labelIds();
    const missing = labels.filter((l) => !ids.has(l));
    if (missing.length > 0)
      throw new ForgeError("POST", "labels", 0, `the repository has no label ${missing.join(", ")}`);
    return { labels: labels.map((l) => ids.get(l) as number) };
  },
};

export function giteaForge(
  base: string,
  owner: string,
  repo: string,
  token: string,
  fetchImpl?: typeof fetch,
): RestForge {
  const http: ForgeHttp = {
    base,
    headers: { authorization: `token ${token}`, "user-agent": "harness-rules" },
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  };
  return new RestForge(http, owner, repo, GITEA);
}
