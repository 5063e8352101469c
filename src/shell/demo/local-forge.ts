/**
 * `harness demo`'s local forge: the pull requests `harness rules propose` opens need a forge, and the
 * demo may use no network, no TLS tooling and no account anywhere. This is a lean Gitea/Forgejo: one
 * `node:http` server on 127.0.0.1 (plain http, which the forge client accepts for a loopback host only)
 * serving the `/api/v1` calls the client makes and real bare repositories through `git http-backend`,
 * with one token check for both. What it reproduces, from the Gitea API (the swagger each Gitea and
 * Forgejo serves at /api/swagger) and git-http-backend(1):
 *
 * - `GET /api/v1/version` answers without a token (the client's forge detection);
 * - every other call needs `Authorization: token <t>` (or `Bearer`), 401 otherwise; `GET /user`;
 * - `GET/POST /repos/{o}/{r}/pulls` (paged by `limit`/`page`, no head filter), 409 for a second open pull
 *   request on the same head and base (repoCreatePullRequest), 422 for a head branch that does not exist;
 *   `GET/PATCH /repos/{o}/{r}/pulls/{n}`;
 * - `POST …/pulls/{n}/requested_reviewers`: 422 for the pull request's author or an unknown user;
 * - `GET /repos/{o}/{r}/labels`, `POST /repos/{o}/{r}/issues/{n}/labels` by label id, 422 for an unknown
 *   id; `GET …/pulls/{n}/reviews` and `GET …/issues/{n}/comments`;
 * - git over smart HTTP: HTTP Basic auth whose password is a valid token (401 with
 *   `WWW-Authenticate: Basic` first, as a private repository answers, so git asks its credential helper),
 *   pushes received with `REMOTE_USER` set.
 *
 * Nothing merges, approves or arms auto-merge (those endpoints are absent: 404). The pull requests are
 * kept in `pulls.json` beside the repositories, as a forge keeps them in its database, so a kept demo
 * directory shows what the forge received.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { promisify } from "node:util";
import { basicCredential, isGitPath, serveGitHttp } from "./git-http-backend.js";

const run = promisify(execFile);
/** A request body larger than this is refused (413): the client's calls are a few kilobytes. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface LocalPull {
  readonly number: number;
  readonly owner: string;
  readonly repo: string;
  title: string;
  body: string;
  readonly head: string;
  readonly base: string;
  state: "open" | "closed";
  merged: boolean;
  readonly author: string;
  readonly reviewers: string[];
  readonly labels: string[];
  readonly createdAt: string;
}

type Answer = readonly [status: number, body: unknown];

const NOT_FOUND: Answer = [404, { message: "The target couldn't be found." }];

export class LocalForge {
  readonly repos: string;
  readonly pulls: LocalPull[] = [];
  private readonly tokens = new Map<string, string>();
  private readonly labels = new Map<string, Map<string, number>>();
  private readonly server: http.Server;
  private port = 0;

  private constructor(readonly root: string) {
    this.repos = path.join(root, "repos");
    fs.mkdirSync(this.repos, { recursive: true, mode: 0o700 });
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  /** Serves a forge kept under `root` on an ephemeral port of 127.0.0.1. */
  static async start(root: string): Promise<LocalForge> {
    const f = new LocalForge(root);
    await new Promise<void>((resolve, reject) => {
      f.server.once("error", reject);
      f.server.listen(0, "127.0.0.1", () => resolve());
    });
    f.port = (f.server.address() as { port: number }).port;
    return f;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  remoteOf(owner: string, repo: string): string {
    return `${this.origin}/${owner}/${repo}.git`;
  }

  /** A user, and a new token that acts as them. */
  addUser(login: string): string {
    const token = randomBytes(20).toString("hex");
    this.tokens.set(token, login);
    return token;
  }

  /** A bare repository with one commit on `main` holding `files`, and the repository's labels. */
  async createRepo(
    owner: string,
    name: string,
    files: Readonly<Record<string, string>>,
    labels: readonly string[],
  ): Promise<void> {
    const bare = this.barePath(owner, name);
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    await this.git(["init", "--quiet", "--bare", "--initial-branch=main", bare]);
    const work = fs.mkdtempSync(path.join(this.root, "work-"));
    try {
      await this.git(["init", "--quiet", "--initial-branch=main", work]);
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
        fs.writeFileSync(path.join(work, file), text);
      }
      await this.git(["-C", work, "add", "-A"]);
      await this.git(["-C", work, "commit", "--quiet", "-m", "the fleet's policy repo"]);
      await this.git(["-C", work, "push", "--quiet", bare, "main"]);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    this.labels.set(`${owner}/${name}`, new Map(labels.map((l, i) => [l, i + 1])));
  }

  /** The file `file` at `ref` of a repository, or undefined. */
  async show(owner: string, name: string, ref: string, file: string): Promise<string | undefined> {
    try {
      return await this.git(["--git-dir", this.barePath(owner, name), "show", `${ref}:${file}`]);
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private barePath(owner: string, name: string): string {
    return path.join(this.repos, owner, `${name}.git`);
  }

  /** git for the forge's own work on its repositories, with no user or system config. */
  private async git(args: readonly string[]): Promise<string> {
    const { stdout } = await run("git", args, {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        HOME: this.root,
        LC_ALL: "C",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "fleet operator",
        GIT_AUTHOR_EMAIL: "operator@localhost",
        GIT_COMMITTER_NAME: "fleet operator",
        GIT_COMMITTER_EMAIL: "operator@localhost",
      },
    });
    return stdout;
  }

  private async branches(owner: string, name: string): Promise<string[]> {
    const out = await this.git([
      "--git-dir",
      this.barePath(owner, name),
      "for-each-ref",
      "--format=%(refname:short)",
      "refs/heads/",
    ]);
    return out.split("\n").filter((l) => l !== "");
  }

  /** The one token check: the login a token acts as, or undefined. */
  private loginOf(token: string | undefined): string | undefined {
    return token === undefined ? undefined : this.tokens.get(token);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.origin);
    if (isGitPath(url.pathname)) {
      const login = this.loginOf(basicCredential(req)?.password);
      if (login === undefined) {
        req.resume();
        res.writeHead(401, { "www-authenticate": 'Basic realm="harness demo forge"' }).end();
        return;
      }
      serveGitHttp(req, res, url, this.repos, login);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on("end", () => {
      const answer: Promise<Answer> =
        size > MAX_BODY_BYTES
          ? Promise.resolve([413, { message: "request body too large" }])
          : this.api(req, url, Buffer.concat(chunks).toString("utf8"));
      answer
        .catch((e: Error): Answer => [500, { message: e.message }])
        .then(([status, body]) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(body === undefined ? "" : JSON.stringify(body));
        });
    });
  }

  private async api(req: http.IncomingMessage, url: URL, raw: string): Promise<Answer> {
    const method = req.method ?? "GET";
    const p = url.pathname;
    if (p === "/api/v1/version" && method === "GET") return [200, { version: "1.22.0+harness-demo" }];
    if (!p.startsWith("/api/v1/")) return NOT_FOUND;
    const login = this.loginOf(/^(?:token|Bearer) (\S+)$/i.exec(req.headers.authorization ?? "")?.[1]);
    if (login === undefined) return [401, { message: "token is required or invalid" }];
    let body: Record<string, unknown> = {};
    if (raw !== "") {
      try {
        const parsed: unknown = JSON.parse(raw);
        if (typeof parsed === "object" && parsed !== null) body = parsed as Record<string, unknown>;
      } catch {
        return [400, { message: "the body is not JSON" }];
      }
    }
    const rest = p.slice("/api/v1".length);
    if (rest === "/user" && method === "GET") return [200, { id: 1, login, username: login }];
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)$/.exec(rest);
    if (m === null) return NOT_FOUND;
    const [, owner, repo, sub] = m as unknown as [string, string, string, string];
    const labels = this.labels.get(`${owner}/${repo}`);
    if (labels === undefined) return NOT_FOUND;
    const mine = this.pulls.filter((x) => x.owner === owner && x.repo === repo);
    const page = <T>(items: readonly T[]): T[] => {
      const size = Math.max(1, Number(url.searchParams.get("limit") ?? 30) || 30);
      const n = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
      return items.slice((n - 1) * size, n * size);
    };
    if (sub === "/pulls" && method === "GET") {
      const state = url.searchParams.get("state") ?? "open";
      return [200, page(mine.filter((x) => state === "all" || x.state === state)).map((x) => this.json(x))];
    }
    if (sub === "/pulls" && method === "POST") return this.createPull(owner, repo, login, body);
    if (sub === "/labels" && method === "GET")
      return [200, page([...labels].map(([name, id]) => ({ id, name })))];
    const n = /^\/(pulls|issues)\/(\d+)(\/[a-z_]+)?$/.exec(sub);
    const pull = n === null ? undefined : mine.find((x) => x.number === Number(n[2]));
    if (n === null || pull === undefined) return NOT_FOUND;
    const what = `${n[1]}${n[3] ?? ""} ${method}`;
    switch (what) {
      case "pulls GET":
        return [200, this.json(pull)];
      case "pulls PATCH":
        if (typeof body.body === "string") pull.body = body.body;
        if (typeof body.title === "string") pull.title = body.title;
        this.persist();
        return [201, this.json(pull)];
      case "pulls/requested_reviewers POST": {
        const users = Array.isArray(body.reviewers) ? body.reviewers.map(String) : [];
        const known = new Set(this.tokens.values());
        if (users.some((u) => u.toLowerCase() === pull.author.toLowerCase() || !known.has(u)))
          return [422, { message: "reviewer is the poster or does not exist" }];
        pull.reviewers.push(...users);
        this.persist();
        return [201, users.map((u) => ({ reviewer: { login: u }, state: "REQUEST_REVIEW" }))];
      }
      case "issues/labels POST": {
        const byId = new Map([...labels].map(([name, id]) => [id, name]));
        const given = Array.isArray(body.labels) ? body.labels : [];
        if (!given.every((g) => typeof g === "number" && byId.has(g)))
          return [422, { message: "label does not exist" }];
        pull.labels.push(...given.map((g) => byId.get(g as number) as string));
        this.persist();
        return [200, pull.labels.map((name) => ({ id: labels.get(name), name }))];
      }
      case "pulls/reviews GET":
      case "issues/comments GET":
        return [200, []];
      default:
        return NOT_FOUND;
    }
  }

  private async createPull(
    owner: string,
    repo: string,
    author: string,
    b: Record<string, unknown>,
  ): Promise<Answer> {
    const head = typeof b.head === "string" ? b.head : "";
    const base = typeof b.base === "string" ? b.base : "";
    const branches = await this.branches(owner, repo);
    if (!branches.includes(head) || !branches.includes(base))
      return [422, { message: `branch ${head} or ${base} does not exist` }];
    const open = this.pulls.find(
      (x) => x.owner === owner && x.repo === repo && x.state === "open" && x.head === head && x.base === base,
    );
    if (open !== undefined)
      return [409, { message: `pull request already exists for these targets [id: ${open.number}]` }];
    const pull: LocalPull = {
      number: this.pulls.length + 1,
      owner,
      repo,
      title: typeof b.title === "string" ? b.title : "",
      body: typeof b.body === "string" ? b.body : "",
      head,
      base,
      state: "open",
      merged: false,
      author,
      reviewers: [],
      labels: [],
      createdAt: new Date().toISOString(),
    };
    this.pulls.push(pull);
    this.persist();
    return [201, this.json(pull)];
  }

  private json(p: LocalPull) {
    return {
      number: p.number,
      html_url: `${this.origin}/${p.owner}/${p.repo}/pulls/${p.number}`,
      state: p.state,
      title: p.title,
      body: p.body,
      user: { login: p.author },
      head: { ref: p.head, repo: { owner: { login: p.owner } } },
      base: { ref: p.base },
      merged: p.merged,
      merged_at: null,
      created_at: p.createdAt,
    };
  }

  private persist(): void {
    const file = path.join(this.root, "pulls.json");
    fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(this.pulls, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
  }
}
