/**
 * The test forge (`test-forge.ts`) as GitLab answers at the wire, from GitLab's REST API documentation
 * (docs.gitlab.com/api, `/api/v4`), over the same `git http-backend` bridge and token store:
 *
 * - Auth: `PRIVATE-TOKEN: <token>` or `Authorization: Bearer <token>`; otherwise 401
 *   `{"message":"401 Unauthorized"}`, which `GET /api/v4/version` answers too without a token (with one,
 *   `{"version", "revision"}`).
 * - `GET /user` (`username`); `GET /users?username=` (a list, empty when none).
 * - Projects by id or URL-encoded full path (`/projects/org%2Fplatform%2Fpolicy`; an unencoded slash is
 *   another route, 404 `{"message":"404 Project Not Found"}`), nested groups included.
 * - Merge requests: `GET …/merge_requests` (`state`, `source_branch`, paged by `per_page`/`page`);
 *   `POST` (source_branch, target_branch, title, description; a missing source branch is 422, a second
 *   open one for the same source and target 409 `["Another open merge request already exists for this
 *   source branch: !n"]`); `GET/PUT …/merge_requests/:iid` (description, title, `reviewer_ids`
 *   replacing the set, unknown ids 422; `add_labels` comma-separated, labels made as needed);
 *   `GET …/reviewers`; `GET …/notes` (a system note on close, as GitLab writes one). GitLab lets the
 *   author be a reviewer, and so does this stand-in: refusing that is the client's job.
 * - States: `opened`, `closed`, `merged`, and `locked` while `lockedPulls` holds the iid.
 * - Git: Basic auth whose password is a token, any user name (GitLab checks a personal, project or group
 *   access token by the password alone; the user name each git request sent is in `gitUsers`).
 */
import type { IncomingMessage } from "node:http";
import { basicCredential } from "../../../src/shell/demo/git-http-backend.js";
import { type Pull, TestForge } from "./test-forge.js";

const UNAUTHORIZED: [number, unknown] = [401, { message: "401 Unauthorized" }];
const NO_PROJECT: [number, unknown] = [404, { message: "404 Project Not Found" }];

export class TestGitLab extends TestForge {
  /** username → id. */
  readonly userIds = new Map<string, number>();
  /** Merge requests (by iid) GitLab is merging: `locked`. */
  readonly lockedPulls = new Set<number>();

  private constructor() {
    super("gitlab");
  }

  static async startGitLab(): Promise<TestGitLab> {
    return new TestGitLab().listen();
  }

  override addUser(login: string): string {
    if (!this.userIds.has(login)) this.userIds.set(login, 100 + this.userIds.size);
    return super.addUser(login);
  }

  override pullUrl(owner: string, repo: string, n: number): string {
    return `${this.origin}/${owner}/${repo}/-/merge_requests/${n}`;
  }

  /** The user names git sent with its Basic auth, one per authenticated git request. */
  gitUsers(): string[] {
    return this.requests.flatMap((r) => {
      const c = basicCredential({ headers: r.headers } as IncomingMessage);
      return c === undefined ? [] : [c.user];
    });
  }

  protected override api(req: IncomingMessage, url: URL, raw: string): [number, unknown] {
    const method = req.method ?? "GET";
    const p = url.pathname;
    if (!p.startsWith("/api/v4/")) return [404, { error: "404 Not Found" }];
    const failure = this.failures.find((f) => f.method === method && f.path.test(p));
    if (failure !== undefined) return [failure.status, { message: failure.message }];
    const header = req.headers["private-token"];
    const token = typeof header === "string" ? header : this.bearer(req);
    const login = token === undefined ? undefined : this.tokens.get(token);
    if (p === "/api/v4/version")
      return login === undefined ? UNAUTHORIZED : [200, { version: "17.6.0-ee", revision: "0f1e2d3c" }];
    if (login === undefined) return UNAUTHORIZED;
    let body: Record<string, unknown> = {};
    if (raw !== "") {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return [400, { error: "body is invalid" }];
      }
    }
    const rest = p.slice("/api/v4".length);
    if (rest === "/user" && method === "GET")
      return [200, { id: this.userIds.get(login), username: login, name: login, state: "active" }];
    if (rest === "/users" && method === "GET") {
      const name = url.searchParams.get("username") ?? "";
      const id = this.userIds.get(name);
      return [200, id === undefined ? [] : [{ id, username: name, name, state: "active" }]];
    }
    const m = /^\/projects\/([^/]+)(\/.*)?$/.exec(rest);
    if (m === null) return [404, { error: "404 Not Found" }];
    const full = decodeURIComponent(m[1] as string);
    const cut = full.lastIndexOf("/");
    if (cut < 0) return NO_PROJECT;
    const owner = full.slice(0, cut);
    const repo = full.slice(cut + 1);
    if (!this.branchesOrUndefined(owner, repo)) return NO_PROJECT;
    const sub = m[2] ?? "";
    const mine = this.pulls.filter((x) => x.owner === owner && x.repo === repo);
    const page = <T>(items: T[]): T[] => {
      const size = Number(url.searchParams.get("per_page") ?? 20);
      const n = Number(url.searchParams.get("page") ?? 1);
      return items.slice((n - 1) * size, n * size);
    };
    if (sub === "/merge_requests" && method === "GET") {
      const state = url.searchParams.get("state") ?? "all";
      const source = url.searchParams.get("source_branch");
      const list = mine.filter(
        (x) => (state === "all" || this.stateOf(x) === state) && (source === null || x.head === source),
      );
      return [200, page(list).map((x) => this.mergeRequestJson(x))];
    }
    if (sub === "/merge_requests" && method === "POST")
      return this.createMergeRequest(owner, repo, login, body);
    const n = /^\/merge_requests\/(\d+)(\/[a-z_]+)?$/.exec(sub);
    if (n === null) return [404, { error: "404 Not Found" }];
    const pull = mine.find((x) => x.number === Number(n[1]));
    if (pull === undefined) return [404, { message: "404 Not found" }];
    const what = n[2] ?? "";
    if (what === "" && method === "GET") return [200, this.mergeRequestJson(pull)];
    if (what === "" && method === "PUT") {
      if (typeof body.description === "string") pull.body = body.description;
      if (typeof body.title === "string") pull.title = body.title;
      if (Array.isArray(body.reviewer_ids)) {
        const byId = new Map([...this.userIds].map(([k, v]) => [v, k]));
        if (!body.reviewer_ids.every((id) => typeof id === "number" && byId.has(id)))
          return [422, { message: { reviewers: ["are invalid"] } }];
        pull.reviewers = body.reviewer_ids.map((id) => byId.get(id as number) as string);
      }
      if (typeof body.add_labels === "string")
        for (const l of body.add_labels.split(",").map((x) => x.trim()))
          if (l !== "" && !pull.labels.includes(l)) pull.labels.push(l);
      return [200, this.mergeRequestJson(pull)];
    }
    if (what === "/reviewers" && method === "GET")
      return [
        200,
        page(
          pull.reviewers.map((r) => ({
            user: { id: this.userIds.get(r), username: r },
            state: "unreviewed",
          })),
        ),
      ];
    if (what === "/notes" && method === "GET") {
      const notes = [
        ...pull.reviews.map((r) => ({ body: r.body, created_at: r.at, system: false })),
        ...pull.comments.map((c) => ({ body: c.body, created_at: c.at, system: false })),
        ...(pull.state === "closed"
          ? [
              {
                body: pull.merged ? "merged" : "closed",
                created_at: new Date(Date.now() + 5000).toISOString(),
                system: true,
              },
            ]
          : []),
      ].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
      return [200, page(notes)];
    }
    return [404, { error: "404 Not Found" }];
  }

  private branchesOrUndefined(owner: string, repo: string): boolean {
    try {
      this.branches(owner, repo);
      return true;
    } catch {
      return false;
    }
  }

  private stateOf(p: Pull): string {
    if (p.state === "open") return this.lockedPulls.has(p.number) ? "locked" : "opened";
    return p.merged ? "merged" : "closed";
  }

  private createMergeRequest(
    owner: string,
    repo: string,
    author: string,
    b: Record<string, unknown>,
  ): [number, unknown] {
    const head = String(b.source_branch ?? "");
    const base = String(b.target_branch ?? "");
    if (!this.branches(owner, repo).includes(head))
      return [422, { message: [`Source branch "${head}" does not exist`] }];
    const open = this.pulls.find(
      (x) => x.owner === owner && x.repo === repo && x.state === "open" && x.head === head && x.base === base,
    );
    if (open !== undefined)
      return [
        409,
        { message: [`Another open merge request already exists for this source branch: !${open.number}`] },
      ];
    const pull: Pull = {
      number: this.pulls.filter((x) => x.owner === owner && x.repo === repo).length + 1,
      owner,
      repo,
      title: String(b.title ?? ""),
      body: String(b.description ?? ""),
      head,
      base,
      state: "open",
      merged: false,
      author,
      reviewers: [],
      labels: [],
      reviews: [],
      comments: [],
      createdAt: new Date().toISOString(),
    };
    this.pulls.push(pull);
    return [201, this.mergeRequestJson(pull)];
  }

  private mergeRequestJson(p: Pull) {
    return {
      id: 5000 + p.number,
      iid: p.number,
      project_id: 42,
      source_project_id: 42,
      target_project_id: 42,
      title: p.title,
      description: p.body === "" ? null : p.body,
      state: this.stateOf(p),
      web_url: this.pullUrl(p.owner, p.repo, p.number),
      source_branch: p.head,
      target_branch: p.base,
      author: { id: this.userIds.get(p.author), username: p.author },
      reviewers: p.reviewers.map((r) => ({ id: this.userIds.get(r), username: r })),
      labels: p.labels,
      merged_at: p.merged ? new Date().toISOString() : null,
    };
  }
}
