/**
 * Real git for policy tests: a bare repository as the remote, and an author's work tree that commits
 * and pushes to it. Git runs with no system or user config, so the machine's settings cannot change
 * what a test sees.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach } from "vitest";
import type { PolicyRepoConfig } from "../../../src/shell/config/global-config.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const GIT_ENV = {
  PATH: process.env.PATH,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Policy Author",
  GIT_AUTHOR_EMAIL: "author@example.test",
  GIT_COMMITTER_NAME: "Policy Author",
  GIT_COMMITTER_EMAIL: "author@example.test",
};

/** Runs git in `cwd` and returns its trimmed stdout. */
export const gitIn = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, {
    cwd,
    env: GIT_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();

/** A temporary directory removed after the test, with XDG variables pointing inside it. */
export function tempRoot(): { root: string; env: NodeJS.ProcessEnv } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-policy-"));
  made.push(root);
  return {
    root,
    env: {
      PATH: process.env.PATH,
      HOME: path.join(root, "home"),
      XDG_CONFIG_HOME: path.join(root, "config"),
      XDG_STATE_HOME: path.join(root, "state"),
      XDG_RUNTIME_DIR: path.join(root, "run"),
    },
  };
}

/** A bare remote on branch `main` and a work tree that pushes to it. */
export class PolicyRemote {
  readonly bare: string;
  readonly work: string;

  constructor(
    root: string,
    readonly name: string,
    readonly branch = "main",
  ) {
    this.bare = path.join(root, "remotes", `${name}.git`);
    this.work = path.join(root, "authors", name);
    fs.mkdirSync(this.bare, { recursive: true });
    gitIn(this.bare, "init", "--quiet", "--bare", "-b", branch);
    fs.mkdirSync(this.work, { recursive: true });
    gitIn(this.work, "init", "--quiet", "-b", branch);
    gitIn(this.work, "remote", "add", "origin", this.bare);
  }

  /** Writes (or, with `null`, deletes) files, commits and pushes; returns the new commit. */
  commit(files: Readonly<Record<string, string | null>>, message = "change rules"): string {
    for (const [file, text] of Object.entries(files)) {
      const p = path.join(this.work, file);
      if (text === null) fs.rmSync(p);
      else {
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text);
      }
    }
    gitIn(this.work, "add", "--all");
    gitIn(this.work, "commit", "--quiet", "--allow-empty", "-m", message);
    gitIn(this.work, "push", "--quiet", "--force", "origin", `HEAD:refs/heads/${this.branch}`);
    return gitIn(this.work, "rev-parse", "HEAD");
  }

  /** Replaces the remote's branch with an unrelated history: the clone can no longer fast-forward. */
  rewrite(files: Readonly<Record<string, string>>): string {
    gitIn(this.work, "checkout", "--quiet", "--orphan", `rewrite-${Date.now()}`);
    gitIn(this.work, "rm", "-r", "--quiet", "-f", "--ignore-unmatch", ".");
    return this.commit(files, "rewritten history");
  }

  config(overrides: Partial<PolicyRepoConfig> = {}): PolicyRepoConfig {
    return {
      name: this.name,
      remote: this.bare,
      branch: undefined,
      credentialFile: undefined,
      reviewers: [],
      labels: [],
      public: true,
      branchPrefix: "harness-rules/",
      maxProposalsPerWeek: 3,
      ...overrides,
    };
  }
}

/** A rule file of REQ-3's table, valid unless `when` is not. */
export const ruleText = (
  name: string,
  when = 'event.type == "edge_added" && event.edge == "edited"',
): string =>
  [
    `name = "${name}"`,
    `description = "Test rule ${name}."`,
    'on = "graph_event"',
    `when = '${when}'`,
    'level = "notify"',
    'target = "run"',
    'message = "{{run}} edited {{path}}"',
    "",
  ].join("\n");

/** Everything that says what state a clone is in: HEAD, every ref, the index and the working tree. */
export function snapshot(dir: string): string {
  const tree = (d: string): string[] =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .filter((e) => e.name !== ".git")
      .flatMap((e) => {
        const p = path.join(d, e.name);
        return e.isDirectory() ? tree(p) : [`${path.relative(dir, p)}=${fs.readFileSync(p, "utf8")}`];
      })
      .sort();
  return [
    gitIn(dir, "rev-parse", "HEAD"),
    gitIn(dir, "symbolic-ref", "-q", "HEAD"),
    gitIn(dir, "for-each-ref", "--format=%(refname) %(objectname)"),
    gitIn(dir, "status", "--porcelain"),
    ...tree(dir),
  ].join("\n");
}
