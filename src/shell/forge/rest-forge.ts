/**
 * The REST calls GitHub and Gitea/Forgejo share, nearly path for path: pulls, requested reviewers,
 * issue labels, reviews and issue comments (docs.github.com/rest/pulls, the Gitea swagger at
 * /api/swagger). What differs is each forge's `Dialect` (`github.ts`, `gitea.ts`): how the token is
 * sent, how a list is paged, how a list of pulls is narrowed to one head, and whether labels are given
 * by name or by id.
 */
import type { Forge, ForgeKind, ForgePull, NewPull } from "./forge.js";
import { ForgeError } from "./forge.js";
import { call, enc, type ForgeHttp, field, isBoolean, isNumber, isString, listPages } from "./http.js";

export interface Dialect {
  readonly kind: ForgeKind;
  /** The query that asks for one page of `size` items. */
  readonly page: (n: number, size: number) => string;
  readonly pageSize: number;
  /** The query narrowing a list of pulls to one head branch, when the forge has one. */
  readonly headQuery: (owner: string, head: string) => string;
  /** The body of `POST /issues/{n}/labels`, from the label names. */
  readonly labelsBody: (forge: RestForge, labels: readonly string[]) => Promise<unknown>;
}

export class RestForge implements Forge {
  readonly kind: ForgeKind;
  readonly api: string;
  private readonly repoPath: string;

  constructor(
    private readonly http: ForgeHttp,
    private readonly owner: string,
    repo: string,
    private readonly dialect: Dialect,
  ) {
    this.kind = dialect.kind;
    this.api = http.base;
    this.repoPath = `/repos/${enc(owner)}/${enc(repo)}`;
  }

  async login(): Promise<string> {
    return field((await call(this.http, "GET", "/user")).body, "login", isString, "/user");
  }

  /** GitHub's documented user for an installation token; GitHub and Gitea check only the token. */
  gitUser(login: string | undefined): string {
    return login ?? "x-access-token";
  }

  async findOpenPull(head: string): Promise<ForgePull | undefined> {
    const path = `${this.repoPath}/pulls?state=open&${this.dialect.headQuery(this.owner, head)}`;
    for (const item of await this.list(path)) {
      const pull = pullOf(item, path);
      if (pull.head === head && pull.state === "open" && sameRepo(item, this.owner)) return pull;
    }
    return undefined;
  }

  async getPull(number: number): Promise<ForgePull> {
    const path = `${this.repoPath}/pulls/${number}`;
    return pullOf((await call(this.http, "GET", path)).body, path);
  }

  async openPull(p: NewPull): Promise<ForgePull> {
    const path = `${this.repoPath}/pulls`;
    const body = { title: p.title, head: p.head, base: p.base, body: p.body };
    return pullOf((await call(this.http, "POST", path, body)).body, path);
  }

  async updateBody(number: number, body: string): Promise<void> {
    await call(this.http, "PATCH", `${this.repoPath}/pulls/${number}`, { body });
  }

  async requestReviewers(number: number, reviewers: readonly string[]): Promise<void> {
    if (reviewers.length === 0) return;
    // `org/team` names a team (its slug after the slash); anything else a user.
    const users = reviewers.filter((r) => !r.includes("/"));
    const teams = reviewers.filter((r) => r.includes("/")).map((r) => r.slice(r.indexOf("/") + 1));
    await call(this.http, "POST", `${this.repoPath}/pulls/${number}/requested_reviewers`, {
      reviewers: users,
      team_reviewers: teams,
    });
  }

  async reviewedBy(number: number): Promise<readonly string[]> {
    const path = `${this.repoPath}/pulls/${number}/reviews`;
    return (await this.list(path)).flatMap((r) => {
      const login = (r as { user?: { login?: unknown } } | null)?.user?.login;
      return typeof login === "string" ? [login] : [];
    });
  }

  async addLabels(number: number, labels: readonly string[]): Promise<void> {
    if (labels.length === 0) return;
    const body = await this.dialect.labelsBody(this, labels);
    await call(this.http, "POST", `${this.repoPath}/issues/${number}/labels`, body);
  }

  /** The repository's labels, name → id (Gitea takes ids). */
  async labelIds(): Promise<Map<string, number>> {
    const path = `${this.repoPath}/labels`;
    const ids = new Map<string, number>();
    for (const l of await this.list(path))
      ids.set(field(l, "name", isString, path), field(l, "id", isNumber, path));
    return ids;
  }

  async lastReviewComment(number: number): Promise<string> {
    const reviews = await this.list(`${this.repoPath}/pulls/${number}/reviews`);
    const comments = await this.list(`${this.repoPath}/issues/${number}/comments`);
    const dated = [
      ...reviews.map((r) => ({ body: r, at: (r as Record<string, unknown>).submitted_at })),
      ...comments.map((c) => ({ body: c, at: (c as Record<string, unknown>).created_at })),
    ].flatMap(({ body, at }) => {
      const text = typeof body === "object" && body !== null ? (body as { body?: unknown }).body : undefined;
      const when = typeof at === "string" ? Date.parse(at) : Number.NaN;
      return typeof text === "string" && text.trim() !== "" && !Number.isNaN(when) ? [{ text, when }] : [];
    });
    dated.sort((a, b) => a.when - b.when);
    return dated.at(-1)?.text ?? "";
  }

  private list(path: string): Promise<unknown[]> {
    return listPages(this.http, path, this.dialect.page, this.dialect.pageSize);
  }
}

function pullOf(item: unknown, where: string): ForgePull {
  const head = field(item, "head", (v): v is object => typeof v === "object" && v !== null, where);
  const state = field(item, "state", isString, where);
  if (state !== "open" && state !== "closed")
    throw new ForgeError("GET", where, 200, `a pull request in state ${JSON.stringify(state.slice(0, 20))}`);
  const merged = (item as { merged?: unknown }).merged;
  const mergedAt = (item as { merged_at?: unknown }).merged_at;
  const o = item as Record<string, unknown>;
  return {
    number: field(item, "number", isNumber, where),
    url: field(item, "html_url", isString, where),
    state,
    merged: isBoolean(merged) ? merged : typeof mergedAt === "string",
    // Neither GitHub's nor Gitea's pull request has a state for a merge in progress.
    merging: false,
    head: field(head, "ref", isString, where),
    body: typeof o.body === "string" ? o.body : "",
    // GitHub: `requested_teams` by slug; Gitea: `requested_reviewers_teams` by name (its slug).
    requested: [
      ...names(o.requested_reviewers, "login"),
      ...names(o.requested_teams, "slug").map((t) => `team:${t}`),
      ...names(o.requested_reviewers_teams, "name").map((t) => `team:${t}`),
    ],
    labels: names(o.labels, "name"),
  };
}

/** The string `key` of each object in a list the forge sent; anything else is skipped. */
function names(list: unknown, key: string): string[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((x) => {
    const v = typeof x === "object" && x !== null ? (x as Record<string, unknown>)[key] : undefined;
    return typeof v === "string" ? [v] : [];
  });
}

/** A pull from a fork has the same branch name in another repository: not ours. */
function sameRepo(item: unknown, owner: string): boolean {
  const repo = (item as { head?: { repo?: { owner?: { login?: unknown } } } }).head?.repo;
  const login = repo?.owner?.login;
  return typeof login !== "string" || login.toLowerCase() === owner.toLowerCase();
}
