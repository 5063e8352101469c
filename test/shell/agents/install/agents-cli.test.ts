/**
 * `harness agents install|uninstall` and doctor's agents row (issue 17, section 3), the built CLI run as
 * a real process against a real daemon, on real settings files in temporary directories: the tokens are
 * minted by the daemon's TokenService and bound to the harness; install then uninstall leaves a settings
 * file with other hooks byte-identical; a second install changes nothing; a file that is not JSON is
 * named with its line and column and nothing is written or minted.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, freePort, jsonl, TestFleet } from "../../daemon-harness.js";

const json = <T>(r: CliResult): T => {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};

interface InstallJson {
  readonly file: string;
  readonly changed: boolean;
  readonly mode: string;
  /** The command hook's client: native where cc builds it (CI has one), else sh. */
  readonly client: string | null;
  readonly events: string[];
  readonly backup: string | null;
  readonly tokens: Record<"observer" | "ledger", { file: string; id: string | null; minted: boolean }>;
  readonly notes: string[];
}

interface TokenListJson {
  readonly tokens: { id: string; kind: string; source: string; harness: string; revoked: string | null }[];
}

type Hooks = Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]>;

const EXISTING = `${JSON.stringify(
  {
    permissions: { allow: ["Bash(npm test)"] },
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint-bash.sh", timeout: 5 }] }],
      Notification: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
    },
  },
  null,
  2,
)}\n`;

describe("harness agents install and uninstall", () => {
  const f = new TestFleet();
  const project = path.join(f.root, "project");
  const state = path.join(f.root, "state", "harness", "agents");
  const local = path.join(project, ".claude", "settings.local.json");
  const committed = path.join(project, ".claude", "settings.json");
  const tokens = async () => json<TokenListJson>(await f.cli(["token", "list", "--all", "--json"])).tokens;
  /** `[agents] listen`'s port: http mode checks the endpoint there is this daemon. */
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
    const config = path.join(f.root, "config", "harness", "harness.toml");
    fs.writeFileSync(
      config,
      fs.readFileSync(config, "utf8").replace(/^listen = ""$/m, `listen = "127.0.0.1:${port}"`),
    );
    await f.start();
    fs.mkdirSync(path.join(project, ".claude"), { recursive: true });
  });
  afterAll(() => f.dispose());

  it("refuses a settings file that is not JSON with its line and column, and writes or mints nothing", async () => {
    const bad = '{\n  "hooks": {\n    "Stop": [],\n  }\n}\n';
    fs.writeFileSync(local, bad);
    const r = await f.cli(["agents", "install", "claude-code", "--harness", "impl", "--project", project]);
    expect(r.stderr).toBe(
      `harness agents install: ${local}:4:3: not valid JSON: expected a key in double quotes ("…"), found "}"; nothing was written\n`,
    );
    expect(r.code).toBe(1);
    expect(fs.readFileSync(local, "utf8")).toBe(bad);
    expect(await tokens()).toEqual([]);
    expect(fs.existsSync(state)).toBe(false);
  });

  it("a dry run says what it would write, and mints and writes nothing", async () => {
    fs.writeFileSync(local, EXISTING);
    const r = json<InstallJson>(
      await f.cli([
        "agents",
        "install",
        "claude-code",
        "--harness",
        "impl",
        "--project",
        project,
        "--dry-run",
        "--json",
      ]),
    );
    expect(r).toMatchObject({ file: local, changed: true, backup: null });
    expect(r.tokens.observer).toEqual({
      file: path.join(state, "impl", "observer.token"),
      id: null,
      minted: true,
    });
    expect(fs.readFileSync(local, "utf8")).toBe(EXISTING);
    expect(await tokens()).toEqual([]);
  });

  it("install writes every event's entry into settings.local.json, mints two tokens bound to the harness, keeps a backup", async () => {
    fs.writeFileSync(committed, '{"model": "opus"}\n');
    const r = json<InstallJson>(
      await f.cli(["agents", "install", "claude-code", "--harness", "impl", "--project", project, "--json"]),
    );
    expect(r.changed).toBe(true);
    expect(r.mode).toBe("command");
    expect(r.client).toBe("native");
    expect(r.events).toEqual([
      "SessionStart",
      "SessionEnd",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "PreCompact",
      "SubagentStart",
      "Stop",
    ]);
    const hooks = (JSON.parse(fs.readFileSync(local, "utf8")) as { hooks: Hooks }).hooks;
    for (const event of r.events) {
      const ours = hooks[event]?.at(-1);
      expect(ours?.matcher).toBeUndefined();
      expect(ours?.hooks).toHaveLength(1);
      expect(ours?.hooks[0]).toMatchObject({ type: "command", timeout: event === "SessionEnd" ? 5 : 10 });
      expect(String(ours?.hooks[0]?.command)).toMatch(
        new RegExp(
          `^\\S+/harness/bin/hook-client-[0-9a-f]{16} ${process.execPath}\\S* \\S+/dist/shell/cli/bin\\.cjs hook claude-code --harness impl --observer-token \\S+/observer\\.token --ledger-token \\S+/ledger\\.token --socket ${f.socketPath}$`,
        ),
      );
    }
    expect(hooks.PreToolUse?.[0]?.hooks[0]?.command).toBe("./lint-bash.sh");
    // The committed settings.json is never touched.
    expect(fs.readFileSync(committed, "utf8")).toBe('{"model": "opus"}\n');
    expect(fs.readFileSync(r.backup as string, "utf8")).toBe(EXISTING);
    for (const role of ["observer", "ledger"] as const) {
      expect(fs.statSync(r.tokens[role].file).mode & 0o777).toBe(0o600);
      expect(r.tokens[role].minted).toBe(true);
    }
    expect(fs.statSync(path.join(state, "impl")).mode & 0o777).toBe(0o700);
    const issued = await tokens();
    expect(issued.map((t) => [t.id, t.kind, t.source, t.harness]).sort()).toEqual(
      [
        [r.tokens.ledger.id, "producer", "ledger", "impl"],
        [r.tokens.observer.id, "producer", "observer", "impl"],
      ].sort(),
    );
    // Bound to the harness: the observer token appends impl's rows, and no other harness's.
    const row = (harness: string) => ({
      kind: "run_event",
      type: "tool",
      harness,
      run: `${harness}#s1`,
      adapter: "claude-code",
      action: "read",
    });
    const ok = await f.cli(
      ["journal", "append", "--token-file", r.tokens.observer.file],
      jsonl([row("impl")]),
    );
    expect(ok.code).toBe(0);
    const refused = await f.cli(
      ["journal", "append", "--token-file", r.tokens.observer.file],
      jsonl([row("other")]),
    );
    expect(refused.code).toBe(1);
  });

  it("the hook's command runs the CLI from any directory", () => {
    const hooks = (JSON.parse(fs.readFileSync(local, "utf8")) as { hooks: Hooks }).hooks;
    const command = String(hooks.Stop?.at(-1)?.hooks[0]?.command);
    const launcher = command.slice(0, command.indexOf(" hook claude-code "));
    const r = spawnSync("/bin/sh", ["-c", `${launcher} --version`], {
      cwd: "/",
      encoding: "utf8",
      env: f.env,
    });
    expect(r.stdout).toMatch(/^harness\/\d+\.\d+\.\d+/);
    expect(r.status).toBe(0);
  });

  it("a second install changes nothing: the same file, the same tokens, no new backup", async () => {
    const before = fs.readFileSync(local, "utf8");
    const backups = fs.readdirSync(path.join(state, "backups"));
    const record = fs.readFileSync(path.join(state, "installs.json"), "utf8");
    const r = json<InstallJson>(
      await f.cli(["agents", "install", "claude-code", "--harness", "impl", "--project", project, "--json"]),
    );
    expect(r.changed).toBe(false);
    expect(r.backup).toBeNull();
    expect(r.tokens.observer.minted).toBe(false);
    expect(fs.readFileSync(local, "utf8")).toBe(before);
    expect(fs.readdirSync(path.join(state, "backups"))).toEqual(backups);
    expect(fs.readFileSync(path.join(state, "installs.json"), "utf8")).toBe(record);
    expect(await tokens()).toHaveLength(2);
  });

  it("doctor's agents row shows the install, the harness's last row and the spool", async () => {
    const spool = path.join(state, "spool");
    fs.mkdirSync(path.join(spool, "failed"), { recursive: true });
    fs.writeFileSync(path.join(spool, "000001764700000-42-0.json"), "{}");
    fs.writeFileSync(path.join(spool, "000001764700001-42-1.json"), "{}");
    fs.writeFileSync(path.join(spool, "overflow"), "3\n");
    const r = await f.cli(["doctor"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^WARN {2}agents {2}1 adapter installed: claude-code for impl \(command, fails as \[agents\] on_unreachable says\)$/m,
    );
    expect(r.stdout).toContain(
      ` pass: claude-code for impl: 9 hooks in ${local} (command mode via the native client, fails as [agents] on_unreachable says)\n`,
    );
    expect(r.stdout).toMatch(
      / pass: impl: last row seq \d+ run_event\/tool from observer \(claude-code\), run impl#s1, at \d{4}-/,
    );
    // The daemon answers: the calls are not waiting for it (issue 26, finding 2).
    expect(r.stdout).toContain(` warn: 2 hook calls spooled in ${spool} though the daemon answers`);
    expect(r.stdout).toContain(" warn: 3 hook calls dropped: the spool was full\n");
    const j = json<{ checks: { name: string; status: string; findings: unknown[] }[] }>(
      await f.cli(["doctor", "--json"]),
    );
    expect(j.checks.find((c) => c.name === "agents")?.status).toBe("warn");
    fs.rmSync(spool, { recursive: true });
    // The compiled client gone (a wiped state directory): the hooks cannot start, and doctor says so.
    const hooks = (JSON.parse(fs.readFileSync(local, "utf8")) as { hooks: Hooks }).hooks;
    const client = String(hooks.Stop?.at(-1)?.hooks[0]?.command).split(" ")[0] as string;
    fs.renameSync(client, `${client}.away`);
    try {
      expect((await f.cli(["doctor"])).stdout).toContain(
        ` warn: claude-code for impl: its hook runs ${client}, which is gone, so the agent's hooks fail to start; run harness agents install again\n`,
      );
    } finally {
      fs.renameSync(`${client}.away`, client);
    }
  });

  it("an install after the harness's tokens were revoked mints them anew and revokes the pair", async () => {
    const install = () =>
      f.cli(["agents", "install", "claude-code", "--harness", "impl", "--project", project, "--json"]);
    const before = json<InstallJson>(await install());
    expect((await f.cli(["token", "revoke", before.tokens.observer.id as string])).code).toBe(0);
    const after = json<InstallJson>(await install());
    expect(after.changed).toBe(false);
    expect(after.tokens.observer.minted).toBe(true);
    expect(after.tokens.observer.id).not.toBe(before.tokens.observer.id);
    const live = (await tokens()).filter((t) => t.revoked === null).map((t) => t.id);
    expect(live.sort()).toEqual([after.tokens.observer.id, after.tokens.ledger.id].sort());
  });

  it("uninstall leaves the settings file byte-identical, revokes the tokens and removes their files", async () => {
    const r = json<{
      removed: number;
      changed: boolean;
      tokens: { state: string; ids: string[]; files: string[] };
    }>(
      await f.cli([
        "agents",
        "uninstall",
        "claude-code",
        "--harness",
        "impl",
        "--project",
        project,
        "--json",
      ]),
    );
    expect(r.removed).toBe(9);
    expect(fs.readFileSync(local, "utf8")).toBe(EXISTING);
    expect(r.tokens.state).toBe("revoked");
    expect(r.tokens.files.every((file) => !fs.existsSync(file))).toBe(true);
    expect(fs.existsSync(path.join(state, "impl"))).toBe(false);
    expect((await tokens()).every((t) => t.revoked !== null)).toBe(true);
    const again = await f.cli([
      "agents",
      "uninstall",
      "claude-code",
      "--harness",
      "impl",
      "--project",
      project,
    ]);
    expect(again.stdout).toBe(`no claude-code hooks of harness impl in ${local}\n`);
    expect(again.code).toBe(0);
  });

  it("Codex: install creates .codex/hooks.json, says the hooks run once trusted in /hooks; uninstall removes the file it created", async () => {
    const r = await f.cli(["agents", "install", "codex", "--harness", "impl", "--project", project]);
    expect(r.code).toBe(0);
    const file = path.join(project, ".codex", "hooks.json");
    expect(r.stdout).toContain(
      `codex hooks for harness impl written to ${file} (command mode): SessionStart, SessionEnd, UserPromptSubmit, PreToolUse, PostToolUse, Stop\n`,
    );
    expect(r.stdout).toContain(
      "  note: Codex runs these hooks only once they are trusted: open /hooks in Codex",
    );
    const hooks = (JSON.parse(fs.readFileSync(file, "utf8")) as { hooks: Hooks }).hooks;
    expect(Object.keys(hooks)).toEqual([
      "SessionStart",
      "SessionEnd",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    expect(String(hooks.PreToolUse?.[0]?.hooks[0]?.command)).toContain(" hook codex --harness impl ");
    // An entry removed by hand: doctor says the file no longer holds all of them.
    delete hooks.Stop;
    fs.writeFileSync(file, `${JSON.stringify({ hooks }, null, 2)}\n`);
    const doctor = await f.cli(["doctor"]);
    expect(doctor.stdout).toContain(
      ` warn: codex for impl: ${file} holds 5 of the 6 hook entries install wrote; run harness agents install again\n`,
    );
    const u = await f.cli(["agents", "uninstall", "codex", "--harness", "impl", "--project", project]);
    expect(u.code).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("--user writes the operator's own files; two adapters of one harness share its tokens until the last is removed", async () => {
    const claude = json<InstallJson>(
      await f.cli(["agents", "install", "claude-code", "--harness", "ops", "--user", "--json"]),
    );
    expect(claude.file).toBe(path.join(f.root, ".claude", "settings.json"));
    const codex = json<InstallJson>(
      await f.cli(["agents", "install", "codex", "--harness", "ops", "--user", "--json"]),
    );
    expect(codex.file).toBe(path.join(f.root, ".codex", "hooks.json"));
    expect(codex.tokens.observer).toEqual({ ...claude.tokens.observer, minted: false });
    const first = json<{ tokens: { state: string; installs: number } }>(
      await f.cli(["agents", "uninstall", "claude-code", "--harness", "ops", "--user", "--json"]),
    );
    expect(first.tokens).toEqual({ state: "kept", installs: 1 });
    expect(fs.existsSync(claude.tokens.observer.file)).toBe(true);
    const last = json<{ tokens: { state: string } }>(
      await f.cli(["agents", "uninstall", "codex", "--harness", "ops", "--user", "--json"]),
    );
    expect(last.tokens.state).toBe("revoked");
    expect(fs.existsSync(claude.tokens.observer.file)).toBe(false);
  });

  it("--mode http writes Claude Code http entries with the tokens in their headers, in a file only the operator reads", async () => {
    const other = path.join(f.root, "http-project");
    fs.mkdirSync(other);
    const r = json<InstallJson>(
      await f.cli([
        "agents",
        "install",
        "claude-code",
        "--harness",
        "web",
        "--project",
        other,
        "--mode",
        "http",
        "--json",
      ]),
    );
    const hooks = (JSON.parse(fs.readFileSync(r.file, "utf8")) as { hooks: Hooks }).hooks;
    const observer = fs.readFileSync(r.tokens.observer.file, "utf8").trim();
    const ledger = fs.readFileSync(r.tokens.ledger.file, "utf8").trim();
    expect(hooks.PreToolUse?.[0]?.hooks[0]).toEqual({
      type: "http",
      url: `http://127.0.0.1:${port}/hooks/claude-code?harness=web`,
      headers: { Authorization: `Bearer ${observer}`, "X-Harness-Ledger-Token": ledger },
      timeout: 5,
    });
    expect(fs.statSync(r.file).mode & 0o777).toBe(0o600);
    expect(
      (await f.cli(["agents", "uninstall", "claude-code", "--harness", "web", "--project", other])).code,
    ).toBe(0);
    expect(fs.existsSync(r.file)).toBe(false);
  });

  it("says so when git would commit the settings file, and not once it is excluded", async () => {
    const repo = path.join(f.root, "repo");
    fs.mkdirSync(repo);
    execFileSync("git", ["init", "-q", repo]);
    const install = async () =>
      json<InstallJson>(
        await f.cli([
          "agents",
          "install",
          "claude-code",
          "--harness",
          "web",
          "--project",
          repo,
          "--mode",
          "http",
          "--json",
        ]),
      ).notes;
    const file = path.join(repo, ".claude", "settings.local.json");
    expect(await install()).toEqual([
      `${file} holds the hook tokens and git does not ignore it in this repository: add it to .git/info/exclude (or .gitignore) so it is never committed`,
    ]);
    fs.appendFileSync(path.join(repo, ".git", "info", "exclude"), ".claude/settings.local.json\n");
    expect(await install()).toEqual([]);
    expect(
      (await f.cli(["agents", "uninstall", "claude-code", "--harness", "web", "--project", repo])).code,
    ).toBe(0);
  });

  it("refuses usage errors with exit 2 and changes nothing", async () => {
    const cases: [string[], string][] = [
      [
        ["agents", "install", "cursor", "--harness", "x"],
        "harness agents install: the agent must be claude-code or codex\n",
      ],
      [["agents", "install", "codex"], "harness agents install: --harness NAME is required\n"],
      [
        ["agents", "install", "codex", "--harness", "../x"],
        "harness agents install: --harness must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit (it names a directory)\n",
      ],
      [
        ["agents", "install", "codex", "--harness", "spool"],
        "harness agents install: --harness spool is a name the agents state directory uses itself; choose another\n",
      ],
      [
        ["agents", "install", "codex", "--harness", "x", "--user", "--project", project],
        "harness agents install: give --project DIR or --user, not both\n",
      ],
      [
        ["agents", "install", "codex", "--harness", "x", "--project", project, "--mode", "http"],
        "harness agents install: --mode http is not for Codex: it runs command hooks alone\n",
      ],
      [
        ["agents", "remove", "codex"],
        "harness agents: unknown verb 'remove' (expected: install, uninstall, status, spool)\n",
      ],
    ];
    for (const [args, stderr] of cases) {
      const r = await f.cli(args);
      expect(r.stderr).toBe(stderr);
      expect(r.code).toBe(2);
    }
    expect(fs.existsSync(path.join(project, ".codex", "hooks.json"))).toBe(false);
  });
});

describe("harness agents install with no daemon", () => {
  const f = new TestFleet();
  afterAll(() => f.dispose());

  it("exits 2 before the daemon has ever made the operator's control token, and 3 when it has stopped; writes nothing", async () => {
    const project = path.join(f.root, "p");
    fs.mkdirSync(project);
    const first = await f.cli([
      "agents",
      "install",
      "claude-code",
      "--harness",
      "impl",
      "--project",
      project,
    ]);
    expect(first.stderr).toMatch(/^harness agents install: the operator's control token is needed: /);
    expect(first.code).toBe(2);
    await f.start();
    await f.stop();
    const r = await f.cli(["agents", "install", "claude-code", "--harness", "impl", "--project", project]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`harness agents install: no daemon answers on ${f.socketPath}\n`);
    expect(fs.existsSync(path.join(project, ".claude"))).toBe(false);
    expect(fs.existsSync(path.join(f.root, "state", "harness", "agents"))).toBe(false);
    const doctor = await f.cli(["doctor", "--json"]);
    expect(doctor.code).toBe(3);
    expect(JSON.parse(doctor.stdout).checks.map((c: { name: string }) => c.name)).toEqual([
      "daemon",
      "agents",
    ]);
  });
});
