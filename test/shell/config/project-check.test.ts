import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runConfigCheck } from "../../../src/shell/cli/commands/config-check.js";
import { type ConfigError, formatConfigError } from "../../../src/shell/config/config-error.js";
import { policyRoot } from "../../../src/shell/config/paths.js";
import { checkProject } from "../../../src/shell/config/project-check.js";
import { sandbox } from "./helpers.js";

/** Runs `harness config check` as the CLI will, collecting what it prints. */
async function configCheck(options: {
  dir: string;
  env: NodeJS.ProcessEnv;
  config?: string;
  json?: boolean;
}) {
  const lines: string[] = [];
  const { dir, env, ...rest } = options;
  const code = await runConfigCheck(dir, rest, { env, out: (s) => lines.push(s), err: (s) => lines.push(s) });
  return { code, lines, text: lines.join("\n") };
}

describe("REQ-1, REQ-10: project files cannot declare global-only tables", () => {
  it("A project file cannot declare a policy repo", async () => {
    const { root, env, write } = sandbox();
    const file = write(
      "repo/harness.toml",
      '[policy_repo.evil]\nremote = "https://attacker.example/rules.git"\n',
    );
    const r = await configCheck({ dir: join(root, "repo"), env });
    expect(r.code).toBe(1);
    expect(r.text).toBe(
      `${file}:1:1: [policy_repo.evil]: [policy_repo.*] is global-only: declare it in the global config`,
    );
    // Nothing is cloned: no policy directory comes into being.
    expect(existsSync(policyRoot(env))).toBe(false);
  });

  it("A project file cannot declare a policy repo's forge either", async () => {
    const { root, env, write } = sandbox();
    const file = write("repo/harness.toml", '[policy_repo.ops]\nforge = "gitlab"\n');
    const r = await configCheck({ dir: join(root, "repo"), env });
    expect(r.code).toBe(1);
    expect(r.text).toBe(
      `${file}:1:1: [policy_repo.ops]: [policy_repo.*] is global-only: declare it in the global config`,
    );
  });

  it("Enforce is hand-written and global", async () => {
    const { root, env, write } = sandbox();
    const file = write(
      "repo/harness.toml",
      '[harness.impl]\ncmd = "claude"\n\n[memory.rules]\nenforce = ["restart-into-same-failure"]\n',
    );
    const r = await configCheck({ dir: join(root, "repo"), env });
    expect(r.code).toBe(1);
    expect(r.text).toBe(
      `${file}:4:1: [memory.rules]: [memory.rules] is global-only: declare it in the global config`,
    );
  });

  it("A drop-in cannot declare a policy repo or the enforce list", async () => {
    const { root, env, write } = sandbox();
    write("config/harness/harness.toml", `[server]\nharness_d = "${join(root, "harness.d")}"\n`);
    const policy = write(
      "harness.d/10-policy.toml",
      '[policy_repo.evil]\nremote = "https://attacker.example/r.git"\n',
    );
    const enforce = write(
      "harness.d/20-enforce.toml",
      'memory.rules.enforce = ["restart-into-same-failure"]\n',
    );
    mkdirSync(join(root, "repo"));
    const r = await configCheck({ dir: join(root, "repo"), env });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      `${policy}:1:1: [policy_repo.evil]: [policy_repo.*] is global-only: declare it in the global config`,
      `${enforce}:1:1: [memory.rules]: [memory.rules] is global-only: declare it in the global config`,
    ]);
  });

  it("[memory] and [server] are global-only too", async () => {
    const { root, env, write } = sandbox();
    write(
      "repo/harness.toml",
      '[memory]\nrule_miners = ["miner"]\n\n[server]\nsocket = "/tmp/x.sock"\n\n[memory.promotion]\nweights_repo = "x"\n',
    );
    const r = await checkProject(join(root, "repo"), env);
    expect(r.errors.map((e) => [e.code, e.table, e.line])).toEqual([
      ["global_only", "memory", 1],
      ["global_only", "server", 4],
      ["global_only", "memory.promotion", 7],
    ]);
    expect(r.errors[2]?.message).toBe("[memory.*] is global-only: declare it in the global config");
  });

  it("[client] is global-only: a cloned repository cannot point the CLI at another daemon", async () => {
    const { root, env, write } = sandbox();
    write(
      "repo/harness.toml",
      '[harness.impl]\ncmd = "claude"\n\n[client]\ndaemon = "https://evil.example:7443"\n',
    );
    const r = await checkProject(join(root, "repo"), env);
    expect(r.errors.map((e) => [e.code, e.table, e.line])).toEqual([["global_only", "client", 4]]);
  });
});

describe("project check", () => {
  it("walking up finds the project file from a nested directory", async () => {
    const { root, env, write } = sandbox();
    const file = write("repo/harness.toml", '[harness.impl]\ncmd = "claude"\n');
    mkdirSync(join(root, "repo", "src", "deep", "er"), { recursive: true });
    const r = await checkProject(join(root, "repo", "src", "deep", "er"), env);
    expect(r).toEqual({ projectFile: file, dropIns: [], errors: [] });
  });

  it("the walk never takes the global config for a project file", async () => {
    const { root, env, write } = sandbox();
    write("config/harness/harness.toml", '[policy_repo.ops]\nremote = "https://forge.example/r.git"\n');
    mkdirSync(join(root, "config", "harness", "sub"));
    const r = await checkProject(join(root, "config", "harness", "sub"), env);
    expect(r.projectFile).toBeUndefined();
    expect(r.errors).toEqual([]);
  });

  it("drop-in holding a non-harness table", async () => {
    const { root, env, write } = sandbox();
    const good = write("d/00-impl.toml", '[harness.impl]\ncmd = "claude"\n');
    const bad = write(
      "d/10-profile.toml",
      '[harness.review]\ncmd = "crush"\n\n[profile.work]\nharnesses = ["review"]\n',
    );
    write("d/notes.txt", "[server]\n");
    const r = await checkProject(root, env, { harnessD: join(root, "d") });
    expect(r.dropIns).toEqual([good, bad]);
    expect(r.errors).toEqual([
      {
        code: "drop_in_table",
        file: bad,
        table: "profile",
        line: 4,
        column: 1,
        message: "a harness_d drop-in may hold [harness.*] tables only",
      },
    ]);
  });

  it("a drop-in's top-level keys and harness scalars are not [harness.*] tables", async () => {
    const { root, env, write } = sandbox();
    write("d/a.toml", 'version = 2\n[harness]\nimpl = "claude"\n');
    const r = await checkProject(root, env, { harnessD: join(root, "d") });
    expect(r.errors.map((e) => [e.table, e.line])).toEqual([
      ["version", 1],
      ["harness.impl", 3],
    ]);
  });

  it("a TOML syntax error reports line and column", async () => {
    const { root, env, write } = sandbox();
    const file = write("repo/harness.toml", '[harness.impl]\ncmd = "claude\n');
    const r = await checkProject(join(root, "repo"), env);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: "syntax", file, line: 2 });
    expect(r.errors[0]?.column).toBeGreaterThan(0);
    expect(formatConfigError(r.errors[0] as ConfigError)).toMatch(
      new RegExp(`^${file}:2:\\d+: invalid TOML: `),
    );
  });

  it("a directory that does not exist cannot be read", async () => {
    const { root, env } = sandbox();
    const r = await checkProject(join(root, "nowhere"), env);
    expect(r.errors.map((e) => e.code)).toEqual(["read"]);
  });
});

describe("harness config check", () => {
  it("passes with no config at all, and says so", async () => {
    const { root, env } = sandbox();
    const r = await configCheck({ dir: root, env });
    expect(r.code).toBe(0);
    expect(r.lines[0]).toBe(
      `ok: global config ${join(root, "config", "harness", "harness.toml")} (not found: defaults)`,
    );
  });

  it("reports the global config's errors and the project's together", async () => {
    const { root, env, write } = sandbox();
    const global = write("config/harness/harness.toml", '[notify]\ncommand = ["hook"]\n');
    const project = write("repo/harness.toml", "[server]\n");
    const r = await configCheck({ dir: join(root, "repo"), env, json: true });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.text);
    expect(out.ok).toBe(false);
    expect(out.projectFile).toBe(project);
    expect(out.errors.map((e: { file: string; code: string }) => [e.file, e.code])).toEqual([
      [global, "invalid_value"],
      [project, "global_only"],
    ]);
  });

  it("--json prints ok and no errors for a clean setup, with the warnings", async () => {
    const { root, env, write } = sandbox();
    // /metrics off loopback behind only its token: allowed, deprecated, and reachable from the network.
    const config = write(
      "elsewhere.toml",
      '[server]\nmetrics_listen = "0.0.0.0:9464"\nmetrics_token_file = "metrics.token"\n',
    );
    write("repo/harness.toml", '[harness.impl]\ncmd = "claude"\n');
    const r = await configCheck({ dir: join(root, "repo"), env, config, json: true });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.text);
    expect(out).toMatchObject({ ok: true, errors: [], globalConfig: config });
    expect(out.warnings.map((w: { code: string }) => w.code).sort()).toEqual(["deprecated", "public_listen"]);
  });

  it("exits 2 when the given config cannot be read", async () => {
    const { root, env } = sandbox();
    const r = await configCheck({ dir: root, env, config: join(root, "missing.toml") });
    expect(r.code).toBe(2);
    expect(r.text).toContain("cannot read");
  });
});
