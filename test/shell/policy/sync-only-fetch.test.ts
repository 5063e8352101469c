/**
 * REQ-1's "Sync is the only fetch": a daemon started beside a policy clone, reloaded, and fed a
 * simulated week of rows (its clock injected) runs git only through a wrapper on its PATH that records
 * every argv; the clone's remote is moved away, so any fetch would also fail.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DAY, HOUR } from "../../../src/core/durations.js";
import { DaemonApp } from "../../../src/shell/app/daemon-app.js";
import { globalConfigPath } from "../../../src/shell/config/paths.js";
import { syncPolicyRepo } from "../../../src/shell/policy/sync.js";
import { createLog } from "../../../src/shell/support/log.js";
import { evaluatorCaughtUp, fires } from "../../support/store-reads.js";
import { PolicyRemote, ruleText, tempRoot } from "./git-fixtures.js";

/** The git subcommands the daemon's loader may run: local reads only. */
const LOCAL_READS = new Set(["rev-parse", "symbolic-ref", "config", "status", "ls-tree", "cat-file"]);

/** A `git` that appends its argv (one invocation a line, arguments separated by US) and runs the real one. */
function recordingGit(root: string): { bin: string; calls: () => string[][] } {
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const bin = path.join(root, "bin");
  const log = path.join(root, "git-argv.log");
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, "git"),
    `#!/bin/sh\n{ for a in "$@"; do printf '%s\\037' "$a"; done; printf '\\n'; } >> '${log}'\nexec '${real}' "$@"\n`,
    { mode: 0o755 },
  );
  return {
    bin,
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .split("\n")
            .filter((l) => l !== "")
            .map((l) => l.split("\u001f").slice(0, -1))
        : [],
  };
}

/** The subcommand of an argv: the first argument after git's own options. */
const subcommand = (argv: readonly string[]): string | undefined => {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "-c") i++;
    else if (!a.startsWith("-")) return a;
  }
  return undefined;
};

describe("REQ-1: the daemon never touches a policy repo's remote", () => {
  it("Sync is the only fetch", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/churn.toml": ruleText("churn") });
    await syncPolicyRepo(remote.config(), env);
    // Any fetch from here on would fail: the remote is gone.
    fs.renameSync(remote.bare, `${remote.bare}.moved`);
    fs.mkdirSync(path.dirname(globalConfigPath(env)), { recursive: true });
    fs.writeFileSync(
      globalConfigPath(env),
      [
        "[memory.rules]",
        'shadow_period = "0s"',
        "[server]",
        'metrics_listen = ""',
        "[agents]",
        'listen = ""',
        "[policy_repo.ops]",
        `remote = ${JSON.stringify(remote.bare)}`,
        "",
      ].join("\n"),
    );
    const git = recordingGit(root);
    let now = Date.parse("2026-11-01T00:00:00Z");
    const daemon = await DaemonApp.start({
      env: { ...env, PATH: `${git.bin}:${process.env.PATH}` },
      clock: () => now,
      log: createLog({ destination: { write: () => undefined } }),
    });
    try {
      await daemon.reload();
      for (let hour = 0; hour < (7 * DAY) / HOUR; hour++) {
        now += HOUR;
        const run = `impl#${Math.floor(hour / 6)}`;
        await daemon.admit("graph", [
          {
            kind: "graph_event",
            type: "edge_added",
            edge: "edited",
            from: `run:${run}`,
            to: "file:forge.example/org/app:main.go",
            repo: "forge.example/org/app",
            path: "main.go",
            harness: "impl",
            run,
          },
        ]);
        await daemon.admit("ledger", [
          { kind: "run_event", type: "closed", harness: "impl", run, outcome: "failed" },
        ]);
        if (hour % 24 === 0) await daemon.reload();
      }
      const caughtUp = () => evaluatorCaughtUp(daemon.store);
      for (let i = 0; i < 400 && !caughtUp(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(caughtUp()).toBe(true);
      // The policy rule was evaluated all week: churn fired (once an hour per run, its cooldown).
      expect(fires(daemon.store, { rule: "churn" }).length).toBeGreaterThan(20);
    } finally {
      await daemon.close();
    }
    const calls = git.calls();
    // Start and eight reloads each read the clone through the wrapper.
    expect(calls.length).toBeGreaterThan(9 * 3);
    expect(calls.filter((argv) => !LOCAL_READS.has(subcommand(argv) ?? ""))).toEqual([]);
    expect(calls.every((argv) => argv.includes("protocol.allow=never"))).toBe(true);
    expect(calls.every((argv) => argv.includes("protocol.ext.allow=never"))).toBe(true);
  });
});
