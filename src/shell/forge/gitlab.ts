/**
 * GitLab's REST API (`/api/v4`, docs.gitlab.com/api), gitlab.com or self-managed. A proposal's pull
 * request is a merge request; its `number` is the merge request's `iid`. A project is named by its
 * URL-encoded full path (`/projects/group%2Fsub%2Fproj`), so nested groups need no lookup. The token (a
 * personal, project or group access token, or an OAuth token) goes in `Authorization: Bearer`, which
 * GitLab accepts for all of them; git sends it as the password of user `oauth2`. Reviewers are user ids
 * (resolved from usernames by `GET /users?username=`), and `reviewer_ids` replaces the whole set, so it
 * is sent as the current reviewers plus the new ones. Labels are a comma-separated `add_labels`.
 * States: `opened` is open; `locked` is open and `merging` (GitLab holds it so while a merge runs, and
 * leaves it so if the merge dies half way), so a pass neither pushes to it nor asks anything of it;
 * `merged` and `closed` are closed. A locked discussion (`discussion_locked`) is another thing: its
 * state stays `opened`.
 */
import type { Forge, ForgePull, NewPull } from "./forge.js";
import { ForgeError } from "./forge.js";
import { call, enc, type ForgeHttp, field, isArray, isNumber, isString, listPages } from "./http.js";

const PAGE = (n: number, size: number): string => `per_page=${size}&page=${n}`;
const PAGE_SIZE = 100;

export class GitLabForge implements Forge {
  readonly kind = "gitlab" as const;
  readonly api: string;
  private readonly project: string;

  constructor(
    private readonly http: ForgeHttp,
    /** The project's full path: `group/sub/project`. */
    projectPath: string,
  ) {
    this.api = http.base;
    this.project = `/projects/${enc(projectPath)}`;
  }

  async login(): Promise<string> {
    return field((await call(this.http, "GET", "/user")).body, "username", isString, "/user");
  }

  /** GitLab takes any token as the password of `oauth2` (an OAuth token only there). */
  gitUser(): string {
    return "oauth2";
  }

  /** An `opened` merge request, or one being merged (`locked`), which a pass must not push to. */
  async findOpenPull(head: string): Promise<ForgePull | undefined> {
    for (const state of ["opened", "locked"]) {
      const path = `${this.project}/merge_requests?state=${state}&source_branch=${enc(head)}`;
      for (const item of await listPages(this.http, path, PAGE, PAGE_SIZE)) {
        const o = item as { source_project_id?: unknown; project_id?: unknown };
        // A merge request from a fork has the same branch name in another project: not ours.
        if (o.source_project_id !== o.project_id) continue;
        const pull = mergeRequestOf(item, path);
        if (pull.head === head && pull.state === "open") return pull;
      }
    }
    return undefined;
  }

  async getPull(number: number): Promise<ForgePull> {
    const path = `${this.project}/merge_requests/${number}`;
    return mergeRequestOf((await call(this.http, "GET", path)).body, path);
  }

  async openPull(p: NewPull): Promise<ForgePull> {
    const path = `${this.project}/merge_requests`;
    const body = {
      source_branch: p.head,
      target_branch: p.base,
      title: p.title,
      description: p.body,
      // The proposal branch goes once its merge request is merged.
      remove_source_branch: true,
    };
    return mergeRequestOf((await call(this.http, "POST", path, body)).body, path);
  }

  async updateBody(number: number, body: string): Promise<void> {
    await call(this.http, "PUT", `${this.project}/merge_requests/${number}`, { description: body });
  }

  async requestReviewers(number: number, reviewers: readonly string[]): Promise<void> {
    if (reviewers.length === 0) return;
    const group = reviewers.find((r) => r.includes("/"));
    if (group !== undefined)
      throw new ForgeError("PUT", "reviewer_ids", 0, `GitLab asks users to review, not groups: ${group}`);
    const path = `${this.project}/merge_requests/${number}`;
    const mr = (await call(this.http, "GET", path)).body;
    const author = (mr as { author?: { username?: unknown } } | null)?.author?.username;
    // GitLab lets an author review their own merge request; a proposal's author must not.
    const self = reviewers.find(
      (r) => typeof author === "string" && r.toLowerCase() === author.toLowerCase(),
    );
    if (self !== undefined)
      throw new ForgeError("PUT", path, 0, `${self} opened this merge request and cannot review it`);
    const ids = new Set(userIds(mr, path));
    for (const r of reviewers) ids.add(await this.userId(r));
    await call(this.http, "PUT", path, { reviewer_ids: [...ids] });
  }

  /** GitLab keeps a reviewer listed once they reviewed; those whose state is no longer `unreviewed`. */
  async reviewedBy(number: number): Promise<readonly string[]> {
    const path = `${this.project}/merge_requests/${number}/reviewers`;
    return (await listPages(this.http, path, PAGE, PAGE_SIZE)).flatMap((r) => {
      const o = r as { user?: { username?: unknown }; state?: unknown } | null;
      const name = o?.user?.username;
      return typeof name === "string" && o?.state !== "unreviewed" ? [name] : [];
    });
  }

  async addLabels(number: number, labels: readonly string[]): Promise<void> {
    if (labels.length === 0) return;
    // `add_labels` is split on commas: a label holding one would become two.
    const comma = labels.find((l) => l.includes(","));
    if (comma !== undefined)
      throw new ForgeError("PUT", "add_labels", 0, `a GitLab label cannot hold a comma: ${comma}`);
    await call(this.http, "PUT", `${this.project}/merge_requests/${number}`, {
      add_labels: labels.join(","),
    });
  }

  /** The newest note a person wrote (system notes, such as "closed", are GitLab's own). */
  async lastReviewComment(number: number): Promise<string> {
    const path = `${this.project}/merge_requests/${number}/notes?sort=asc&order_by=created_at`;
    const dated = (await listPages(this.http, path, PAGE, PAGE_SIZE)).flatMap((n) => {
      const o = (typeof n === "object" && n !== null ? n : {}) as Record<string, unknown>;
      const when = typeof o.created_at === "string" ? Date.parse(o.created_at) : Number.NaN;
      return o.system !== true && typeof o.body === "string" && o.body.trim() !== "" && !Number.isNaN(when)
        ? [{ text: o.body, when }]
        : [];
    });
    dated.sort((a, b) => a.when - b.when);
    return dated.at(-1)?.text ?? "";
  }

  private async userId(username: string): Promise<number> {
    const path = `/users?username=${enc(username)}`;
    const { body } = await call(this.http, "GET", path);
    const user = (isArray(body) ? body : []).find(
      (u) =>
        (u as { username?: unknown } | null)?.username?.toString().toLowerCase() === username.toLowerCase(),
    );
    if (user === undefined) throw new ForgeError("GET", path, 0, `GitLab has no user ${username}`);
    return field(user, "id", isNumber, path);
  }
}

function mergeRequestOf(item: unknown, where: string): ForgePull {
  const state = field(item, "state", isString, where);
  if (!["opened", "locked", "merged", "closed"].includes(state))
    throw new ForgeError("GET", where, 200, `a merge request in state ${JSON.stringify(state.slice(0, 20))}`);
  const o = item as Record<string, unknown>;
  return {
    number: field(item, "iid", isNumber, where),
    url: field(item, "web_url", isString, where),
    state: state === "opened" || state === "locked" ? "open" : "closed",
    merged: state === "merged",
    merging: state === "locked",
    head: field(item, "source_branch", isString, where),
    body: typeof o.description === "string" ? o.description : "",
    requested: isArray(o.reviewers)
      ? o.reviewers.flatMap((r) => {
          const name = (r as { username?: unknown } | null)?.username;
          return typeof name === "string" ? [name] : [];
        })
      : [],
    labels: isArray(o.labels) ? o.labels.filter(isString) : [],
  };
}

function userIds(mr: unknown, where: string): number[] {
  const reviewers = (mr as { reviewers?: unknown } | null)?.reviewers;
  return isArray(reviewers) ? reviewers.map((r) => field(r, "id", isNumber, where)) : [];
}

export function gitlabForge(
  base: string,
  projectPath: string,
  token: string,
  fetchImpl?: typeof fetch,
): GitLabForge {
  const http: ForgeHttp = {
    base,
    headers: { authorization: `Bearer ${token}`, "user-agent": "harness-rules" },
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  };
  return new GitLabForge(http, projectPath);
}
