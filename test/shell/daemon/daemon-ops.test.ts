import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  actions,
  evaluatorCursor,
  fires,
  holds,
  journalCount,
  journalRows,
} from "../../support/store-reads.js";
import { HOOKS, jsonl, TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const budget = (harness: string, n: number) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome: "budget_exceeded",
});

describe("the daemon's loop", () => {
  it("writes one tick row per tick period while it runs", async () => {
    const f = new TestFleet();
    fleets.push(f);
    await f.start({ HARNESS_TICK_MS: "200" });
    await f.until(() => journalCount(f, { kind: "tick" }) >= 3, "three ticks");
    const ticks = journalRows(f, { kind: "tick" });
    expect(ticks.every((t) => t.source === "tick" && t.type === "tick")).toBe(true);
  });

  it("on SIGHUP reloads between two rows: a hold whose rule left enforce is released with cause reload", async () => {
    const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
    fleets.push(f);
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([budget("nightly", 1), budget("nightly", 2)]),
    );
    await f.until(() => holds(f, { inForce: true }).length === 1, "the hold");
    const config = path.join(f.root, "config", "harness", "harness.toml");
    fs.writeFileSync(
      config,
      fs.readFileSync(config, "utf8").replace(/enforce = .*/, 'enforce = ["no-such-rule"]'),
    );
    const lock = JSON.parse(fs.readFileSync(`${f.storePath}.lock`, "utf8")) as { pid: number };
    process.kill(lock.pid, "SIGHUP");
    await f.until(() => holds(f).filter((h) => h.release_cause === "reload").length === 1, "the release");
    expect((await f.cli(["rules", "admission", "nightly"])).code).toBe(0);
    await f.until(() => /enforce names a rule that is not loaded/.test(f.daemonStdout), "the WARN");
    expect(f.daemonStdout).toMatch(/"rule":"no-such-rule".*enforce names a rule that is not loaded/);
  });

  it("harness reload swaps the rule set in and reports what loaded, what is disabled and what enforce misses", async () => {
    const f = new TestFleet();
    fleets.push(f);
    await f.start();
    const config = path.join(f.root, "config", "harness", "harness.toml");
    fs.writeFileSync(
      config,
      fs
        .readFileSync(config, "utf8")
        .replace(/enforce = .*/, 'enforce = ["no-such-rule"]\ndisable = ["cross-run-churn"]'),
    );
    const r = await f.cli(["reload", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      loaded: 5,
      disabled: [
        { name: "cross-run-churn", reason: "operator", message: "listed in [memory.rules] disable" },
      ],
      unknown_enforced: ["no-such-rule"],
      stale_pins: [],
      released: 0,
      needs_restart: [],
    });
    fs.writeFileSync(config, "[memory.rules]\nenforce = 3\n");
    const bad = await f.cli(["reload"]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/reload failed; the config and rule set in force are unchanged: .*enforce/s);
  });

  it("keeps evaluating at its pace while the notify hook hangs, and records the timeout", async () => {
    const f = new TestFleet();
    fleets.push(f);
    const config = path.join(f.root, "config", "harness", "harness.toml");
    fs.writeFileSync(
      config,
      fs
        .readFileSync(config, "utf8")
        .replace(/command = .*/, `command = ${JSON.stringify([path.join(HOOKS, "hang")])}`)
        .replace(/timeout = .*/, 'timeout = "1s"'),
    );
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([budget("a", 1), budget("a", 2), budget("b", 1), budget("b", 2), budget("c", 1), budget("c", 2)]),
    );
    // Three fires, each with a hook that never exits: evaluation does not wait for any of them.
    await f.until(() => fires(f).length === 3, "three fires");
    expect(evaluatorCursor(f)).toBeGreaterThanOrEqual(6);
    await f.until(
      () => actions(f, { state: "timeout" }).length === 3,
      "the hooks killed at their timeout",
      15_000,
    );
    expect([...new Set(actions(f).map((a) => a.state))]).toEqual(["timeout"]);
  });
});
