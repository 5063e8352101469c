/**
 * A forge for tests that behaves like the real ones at the wire: one HTTPS server on 127.0.0.1 (a
 * self-signed certificate made with openssl for the run) serving both the REST subset
 * `harness rules propose` uses and real bare repositories through `git http-backend`, with one token
 * check for both. No GitHub or Gitea server can run here, so what it reproduces is taken from their
 * documentation:
 *
 * - GitHub REST (docs.github.com/rest, API version 2022-11-28), served GitHub Enterprise Server style
 *   under `/api/v3` (github.com's api.github.com has the same paths): `GET /user`; `GET/POST
 *   /repos/{o}/{r}/pulls` (list narrowed by `head=<owner>:<branch>`, paged by `per_page`/`page`);
 *   `GET/PATCH /repos/{o}/{r}/pulls/{n}`; `POST …/pulls/{n}/requested_reviewers`; `POST
 *   /repos/{o}/{r}/issues/{n}/labels` (names); `GET …/pulls/{n}/reviews`, `GET …/issues/{n}/comments`;
 *   `GET /api/v3/meta`. `Authorization: Bearer` (or `token`); a bad or missing token is 401
 *   "Bad credentials". A second pull request for the same head and base is 422 "Validation Failed" with
 *   the error "A pull request already exists for <owner>:<branch>." (the documented create-pull
 *   response, and what GitHub answers in practice); a reviewer who is the pull request's author is 422
 *   "Review cannot be requested from pull request author."; a head branch that does not exist is 422.
 * - Gitea/Forgejo (`/api/v1`, the swagger each serves at /api/swagger): `GET /api/v1/version` without a
 *   token; the same paths as above, paged by `limit`/`page`, pulls' list with no head filter, labels by
 *   id (`GET /repos/{o}/{r}/labels`); `Authorization: token` (or `Bearer`), 401 otherwise;
 *   repoCreatePullRequest answers 409 when a pull request for these targets already exists; a review
 *   request for the author, or for an unknown user, is 422.
 * - Git over smart HTTP (git-http-backend(1), through `src/shell/demo/git-http-backend.ts`, which the
 *   demo's local forge serves with too): every request needs HTTP Basic auth whose password is a valid
 *   token (401 with `WWW-Authenticate: Basic` first, as a private repository answers, so git asks its
 *   credential helper); pushes are received with `REMOTE_USER` set, as the documentation's
 *   authenticated-push setup does.
 *
 * Nothing merges, approves or arms auto-merge: those endpoints are absent (404), and every request is
 * kept in `requests`, so a test can show none was made.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import { basicCredential, isGitPath, serveGitHttp } from "../../../src/shell/demo/git-http-backend.js";

export type ForgeKind = "github" | "gitea" | "gitlab";

export interface Pull {
  number: number;
  owner: string;
  repo: string;
  title: string;
  body: string;
  head: string;
  base: string;
  state: "open" | "closed";
  merged: boolean;
  author: string;
  reviewers: string[];
  labels: string[];
  reviews: { body: string; at: string }[];
  comments: { body: string; at: string }[];
  createdAt: string;
}

export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A git command for the test's own use (making repos, moving branches), never the code under test. */
const gitSync = (args: readonly string[], cwd?: string): string =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "someone else",
      GIT_AUTHOR_EMAIL: "else@example.invalid",
      GIT_COMMITTER_NAME: "someone else",
      GIT_COMMITTER_EMAIL: "else@example.invalid",
    },
  });

export class TestForge {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-forge-"));
  readonly repos = path.join(this.root, "repos");
  readonly caFile = path.join(this.root, "ca.pem");
  readonly pulls: Pull[] = [];
  readonly requests: Received[] = [];
  /** Per repo (`owner/name`): label name → id. */
  readonly labels = new Map<string, Map<string, number>>();
  protected readonly tokens = new Map<string, string>();
  private readonly installationTokens = new Set<string>();
  /** `createRepo`'s files (as JSON) → a pristine copy of the bare repository first made with them. */
  private readonly templates = new Map<string, string>();
  /** Held before each git request is answered, so a test can watch a push while it runs. */
  gitDelayMs = 0;
  /** API calls answered with an error until removed: a forge having a bad day (a 500 on one endpoint). */
  readonly failures: { method: string; path: RegExp; status: number; message: string }[] = [];
  private readonly server: https.Server;
  private port = 0;

  protected constructor(readonly kind: ForgeKind) {
    fs.mkdirSync(this.repos);
    const key = path.join(this.root, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        this.caFile,
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    this.server = https.createServer(
      { key: fs.readFileSync(key), cert: fs.readFileSync(this.caFile) },
      (req, res) => this.handle(req, res),
    );
  }

  /** GitHub's or Gitea's; GitLab's is `TestGitLab.start` (`test-gitlab.ts`). */
  static async start(kind: "github" | "gitea"): Promise<TestForge> {
    return new TestForge(kind).listen();
  }

  protected async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get origin(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** The page a reviewer opens for pull request `n`. */
  pullUrl(owner: string, repo: string, n: number): string {
    return `${this.origin}/${owner}/${repo}/pull${this.kind === "github" ? "" : "s"}/${n}`;
  }

  remoteOf(owner: string, repo: string): string {
    return `${this.origin}/${owner}/${repo}.git`;
  }

  /**
   * A GitHub App installation and its installation token (`ghs_…`), acting as the app's bot user
   * `login` (`<app>[bot]`). It may do what the app's permissions let it on repositories, but GitHub
   * answers `GET /user` for it with 403 "Resource not accessible by integration", as documented for
   * endpoints that do not work with installation tokens.
   */
  addInstallation(login: string): string {
    const token = `ghs_${randomBytes(18).toString("hex")}`;
    this.tokens.set(token, login);
    this.installationTokens.add(token);
    return token;
  }

  /** A user and a token that acts as them. */
  addUser(login: string): string {
    const prefix = { github: "ghp_", gitea: "gta_", gitlab: "glpat-" }[this.kind];
    const token = `${prefix}${randomBytes(24).toString("hex")}`;
    this.tokens.set(token, login);
    return token;
  }

  /**
   * A bare repository with one commit on `main` holding `files`. The first one made with the same files
   * is kept aside and copied after, byte for byte (the same commit), which is many times cheaper than
   * the five git commands that make it.
   */
  createRepo(owner: string, name: string, files: Record<string, string>, labels: string[] = []): string {
    const bare = path.join(this.repos, owner, `${name}.git`);
    fs.rmSync(bare, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    this.labels.set(`${owner}/${name}`, new Map(labels.map((l, i) => [l, 100 + i])));
    const key = JSON.stringify(files);
    const made = this.templates.get(key);
    if (made !== undefined) {
      fs.cpSync(made, bare, { recursive: true });
      return bare;
    }
    gitSync(["init", "--quiet", "--bare", "--initial-branch=main", bare]);
    const work = fs.mkdtempSync(path.join(this.root, "work-"));
    gitSync(["init", "--quiet", "--initial-branch=main", work]);
    for (const [file, text] of Object.entries({ "README.md": "policy\n", ...files })) {
      fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
      fs.writeFileSync(path.join(work, file), text);
    }
    gitSync(["add", "-A"], work);
    gitSync(["commit", "--quiet", "-m", "initial"], work);
    gitSync(["push", "--quiet", bare, "main"], work);
    fs.rmSync(work, { recursive: true, force: true });
    const template = path.join(this.root, "templates", String(this.templates.size));
    fs.mkdirSync(path.dirname(template), { recursive: true });
    fs.cpSync(bare, template, { recursive: true });
    this.templates.set(key, template);
    return bare;
  }

  /**
   * Forgets every pull request and request, as a new forge would, for the next test of a file that
   * shares one forge (and its certificate, users and tokens) between tests; the caller makes the
   * repositories afresh with `createRepo`.
   */
  reset(): void {
    this.pulls.length = 0;
    this.requests.length = 0;
    this.failures.length = 0;
    this.gitDelayMs = 0;
  }

  /** A new branch at `from`, as a push of someone else's would make it. */
  branch(owner: string, name: string, branch: string, from = "main"): void {
    gitSync(["--git-dir", path.join(this.repos, owner, `${name}.git`), "branch", branch, from]);
  }

  /** A commit by someone else on `branch` of the bare repository (a branch that moved under us). */
  commitAs(owner: string, name: string, branch: string, file: string, text: string): string {
    const bare = path.join(this.repos, owner, `${name}.git`);
    const work = fs.mkdtempSync(path.join(this.root, "work-"));
    gitSync(["clone", "--quiet", "--branch", branch, bare, work]);
    fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    fs.writeFileSync(path.join(work, file), text);
    gitSync(["add", "-A"], work);
    gitSync(["commit", "--quiet", "-m", "someone else's commit"], work);
    gitSync(["push", "--quiet", "origin", branch], work);
    const head = gitSync(["rev-parse", "HEAD"], work).trim();
    fs.rmSync(work, { recursive: true, force: true });
    return head;
  }

  /** The file `file` at `ref` of the bare repository, or undefined. */
  show(owner: string, name: string, ref: string, file: string): string | undefined {
    try {
      return gitSync(["--git-dir", path.join(this.repos, owner, `${name}.git`), "show", `${ref}:${file}`]);
    } catch {
      return undefined;
    }
  }

  /** `git log -1 --format=<format>` of `ref` in the bare repository. */
  log(owner: string, name: string, ref: string, format: string): string {
    return gitSync([
      "--git-dir",
      path.join(this.repos, owner, `${name}.git`),
      "log",
      "-1",
      `--format=${format}`,
      ref,
    ]).trim();
  }

  /** The files a branch changed against `base`. */
  changedFiles(owner: string, name: string, base: string, head: string): string[] {
    return gitSync([
      "--git-dir",
      path.join(this.repos, owner, `${name}.git`),
      "diff",
      "--name-only",
      `${base}...${head}`,
    ])
      .split("\n")
      .filter((l) => l !== "");
  }

  branches(owner: string, name: string): string[] {
    return gitSync([
      "--git-dir",
      path.join(this.repos, owner, `${name}.git`),
      "for-each-ref",
      "--format=%(refname:short)",
      "refs/heads/",
    ])
      .split("\n")
      .filter((l) => l !== "");
  }

  /**
   * A `pre-receive` hook in the bare repository that prints `lines` to stderr and refuses every push,
   * as a forge's server-side hook or branch protection does; git relays them as `remote:` lines.
   */
  rejectPushes(owner: string, name: string, lines: readonly string[]): void {
    const hook = path.join(this.repos, owner, `${name}.git`, "hooks", "pre-receive");
    fs.mkdirSync(path.dirname(hook), { recursive: true });
    const script = lines.map((l) => `printf '%s\\n' '${l.replace(/'/g, "'\\''")}' >&2`).join("\n");
    fs.writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\n${script}\nexit 1\n`, { mode: 0o755 });
  }

  /** A reviewer closes (or merges) a pull request, with a last comment. */
  close(number: number, how: { merged?: boolean; review?: string; comment?: string } = {}): void {
    const p = this.pulls.find((x) => x.number === number);
    if (p === undefined) throw new Error(`no pull request #${number}`);
    const at = new Date(Date.now() + 1000).toISOString();
    if (how.comment !== undefined) p.comments.push({ body: how.comment, at });
    if (how.review !== undefined) p.reviews.push({ body: how.review, at });
    p.state = "closed";
    p.merged = how.merged === true;
  }

  async stopServing(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async dispose(): Promise<void> {
    await this.stopServing();
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  // ── the wire ──────────────────────────────────────────────────────────────────────────────

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", this.origin);
    if (isGitPath(url.pathname)) {
      this.gitHttp(req, res, url);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      this.requests.push({
        method: req.method ?? "",
        path: url.pathname + url.search,
        headers: req.headers,
        body,
      });
      const [status, answer] = this.api(req, url, body);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(answer === undefined ? "" : JSON.stringify(answer));
    });
  }

  private apiBase(): string {
    return this.kind === "github" ? "/api/v3" : "/api/v1";
  }

  protected bearer(req: IncomingMessage): string | undefined {
    return /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
  }

  private tokenOf(req: IncomingMessage): string | undefined {
    const token = this.bearer(req);
    return token === undefined ? undefined : this.tokens.get(token);
  }

  protected api(req: IncomingMessage, url: URL, raw: string): [number, unknown] {
    const method = req.method ?? "GET";
    const p = url.pathname;
    if (this.kind === "gitea" && p === "/api/v1/version") return [200, { version: "1.22.0" }];
    if (this.kind === "github" && p === "/api/v3/meta")
      return [200, { verifiable_password_authentication: false }];
    if (!p.startsWith(`${this.apiBase()}/`)) return [404, { message: "Not Found" }];
    const failure = this.failures.find((f) => f.method === method && f.path.test(p));
    if (failure !== undefined) return [failure.status, { message: failure.message }];
    const login = this.tokenOf(req);
    if (login === undefined)
      return [
        401,
        { message: this.kind === "github" ? "Bad credentials" : "user does not exist [uid: 0, name: ]" },
      ];
    const rest = p.slice(this.apiBase().length);
    let body: Record<string, unknown> = {};
    if (raw !== "") {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return [400, { message: "Problems parsing JSON" }];
      }
    }
    if (rest === "/user" && method === "GET") {
      if (this.installationTokens.has(this.bearer(req) ?? ""))
        return [
          403,
          {
            message: "Resource not accessible by integration",
            documentation_url: "https://docs.github.com/rest/users/users#get-the-authenticated-user",
            status: "403",
          },
        ];
      return [200, { login, id: 1 }];
    }
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)$/.exec(rest);
    if (m === null) return [404, { message: "Not Found" }];
    const [, owner, repo, sub] = m as unknown as [string, string, string, string];
    if (!fs.existsSync(path.join(this.repos, owner, `${repo}.git`))) return [404, { message: "Not Found" }];
    const mine = this.pulls.filter((x) => x.owner === owner && x.repo === repo);
    const page = <T>(items: T[]): T[] => {
      const size = Number(url.searchParams.get(this.kind === "github" ? "per_page" : "limit") ?? 30);
      const n = Number(url.searchParams.get("page") ?? 1);
      return items.slice((n - 1) * size, n * size);
    };
    if (sub === "/pulls" && method === "GET") {
      const state = url.searchParams.get("state") ?? "open";
      const head = this.kind === "github" ? url.searchParams.get("head") : null;
      const list = mine.filter(
        (x) => (state === "all" || x.state === state) && (head === null || `${owner}:${x.head}` === head),
      );
      return [200, page(list).map((x) => this.pullJson(x, false))];
    }
    if (sub === "/pulls" && method === "POST") return this.createPull(owner, repo, login, body);
    if (sub === "/labels" && method === "GET" && this.kind === "gitea")
      return [
        200,
        page([...(this.labels.get(`${owner}/${repo}`) ?? new Map())].map(([name, id]) => ({ id, name }))),
      ];
    const n = /^\/(pulls|issues)\/(\d+)(\/[a-z_]+)?$/.exec(sub);
    if (n === null) return [404, { message: "Not Found" }];
    const pull = mine.find((x) => x.number === Number(n[2]));
    if (pull === undefined) return [404, { message: "Not Found" }];
    const what = `${n[1]}${n[3] ?? ""}`;
    if (what === "pulls" && method === "GET") return [200, this.pullJson(pull, true)];
    if (what === "pulls" && method === "PATCH") {
      if (typeof body.body === "string") pull.body = body.body;
      if (typeof body.title === "string") pull.title = body.title;
      return [200, this.pullJson(pull, true)];
    }
    if (what === "pulls/requested_reviewers" && method === "POST") {
      const users = (body.reviewers as string[] | undefined) ?? [];
      if (users.some((u) => u.toLowerCase() === pull.author.toLowerCase()))
        return [
          422,
          this.kind === "github"
            ? { message: "Review cannot be requested from pull request author." }
            : { message: "reviewer is the pull request's poster" },
        ];
      // Asking again for a reviewer already requested changes nothing, on both forges.
      for (const r of [
        ...users,
        ...((body.team_reviewers as string[] | undefined) ?? []).map((t) => `team:${t}`),
      ])
        if (!pull.reviewers.includes(r)) pull.reviewers.push(r);
      return [201, this.pullJson(pull, true)];
    }
    // Adding a label the issue has keeps one of it.
    const addLabel = (l: string) => {
      if (!pull.labels.includes(l)) pull.labels.push(l);
    };
    if (what === "issues/labels" && method === "POST") {
      const given = (body.labels as unknown[] | undefined) ?? [];
      if (this.kind === "gitea") {
        const byId = new Map([...(this.labels.get(`${owner}/${repo}`) ?? new Map())].map(([k, v]) => [v, k]));
        if (!given.every((g) => typeof g === "number" && byId.has(g)))
          return [422, { message: "label does not exist" }];
        for (const g of given) addLabel(byId.get(g as number) as string);
      } else for (const g of given as string[]) addLabel(g);
      return [200, pull.labels.map((name, i) => ({ id: i + 1, name }))];
    }
    if (what === "pulls/reviews" && method === "GET")
      return [200, page(pull.reviews.map((r) => ({ body: r.body, submitted_at: r.at, state: "COMMENTED" })))];
    if (what === "issues/comments" && method === "GET")
      return [200, page(pull.comments.map((c) => ({ body: c.body, created_at: c.at })))];
    return [404, { message: "Not Found" }];
  }

  private createPull(
    owner: string,
    repo: string,
    author: string,
    b: Record<string, unknown>,
  ): [number, unknown] {
    const head = String(b.head ?? "");
    const base = String(b.base ?? "");
    if (!this.branches(owner, repo).includes(head))
      return [
        422,
        this.kind === "github"
          ? {
              message: "Validation Failed",
              errors: [{ resource: "PullRequest", field: "head", code: "invalid" }],
            }
          : { message: `branch ${head} does not exist` },
      ];
    if (
      this.pulls.some(
        (x) =>
          x.owner === owner && x.repo === repo && x.state === "open" && x.head === head && x.base === base,
      )
    )
      return this.kind === "github"
        ? [
            422,
            {
              message: "Validation Failed",
              errors: [
                {
                  resource: "PullRequest",
                  code: "custom",
                  message: `A pull request already exists for ${owner}:${head}.`,
                },
              ],
            },
          ]
        : [409, { message: "pull request already exists for these targets" }];
    const pull: Pull = {
      number: this.pulls.length + 1,
      owner,
      repo,
      title: String(b.title ?? ""),
      body: String(b.body ?? ""),
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
    return [201, this.pullJson(pull, true)];
  }

  private pullJson(p: Pull, single: boolean) {
    return {
      number: p.number,
      html_url: `${this.origin}/${p.owner}/${p.repo}/pull${this.kind === "github" ? "" : "s"}/${p.number}`,
      state: p.state,
      title: p.title,
      body: p.body,
      user: { login: p.author },
      head: { ref: p.head, repo: { owner: { login: p.owner } } },
      base: { ref: p.base },
      merged_at: p.merged ? new Date().toISOString() : null,
      labels: p.labels.map((name, i) => ({ id: i + 1, name })),
      requested_reviewers: p.reviewers.filter((r) => !r.startsWith("team:")).map((login) => ({ login })),
      // GitHub names requested teams by slug in `requested_teams`; Gitea in `requested_reviewers_teams`.
      [this.kind === "github" ? "requested_teams" : "requested_reviewers_teams"]: p.reviewers
        .filter((r) => r.startsWith("team:"))
        .map((t) => (this.kind === "github" ? { slug: t.slice(5) } : { name: t.slice(5) })),
      // GitHub's list items carry no `merged`; its single pull and every Gitea pull do.
      ...(single || this.kind === "gitea" ? { merged: p.merged } : {}),
    };
  }

  private gitHttp(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const credential = basicCredential(req);
    const login = credential === undefined ? undefined : this.tokens.get(credential.password);
    this.requests.push({
      method: req.method ?? "",
      path: url.pathname + url.search,
      headers: req.headers,
      body: "",
    });
    if (login === undefined) {
      req.resume();
      res.writeHead(401, { "www-authenticate": 'Basic realm="test-forge"' }).end();
      return;
    }
    if (this.gitDelayMs > 0) {
      req.pause();
      setTimeout(() => this.backend(req, res, url, login), this.gitDelayMs);
    } else this.backend(req, res, url, login);
  }

  private backend(req: IncomingMessage, res: ServerResponse, url: URL, login: string): void {
    serveGitHttp(req, res, url, this.repos, login);
  }
}
