import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { actions, fires, holds, journalPaths, journalRows } from "../../support/store-reads.js";
import { ERROR_STREAK_STOPS, jsonl, TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});
const fleet = (options?: ConstructorParameters<typeof TestFleet>[0]) => {
  const f = new TestFleet(options);
  fleets.push(f);
  return f;
};

const closed = (harness: string, n: number, outcome: string, extra: Record<string, unknown> = {}) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome,
  ...extra,
});

describe("harness daemon, a real process driven by the real CLI", () => {
  it("runs on default settings and prints where its store, socket and metrics are", async () => {
    const f = fleet({ noConfig: true });
    const said = await f.start();
    expect(said).toContain(`store ${f.storePath}`);
    expect(said).toContain(`socket ${f.socketPath}`);
    expect(said).toMatch(/metrics (http:\/\/127\.0\.0\.1:\d+\/metrics|off)/);
    expect(fs.statSync(f.storePath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(f.storePath)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(f.socketPath).mode & 0o777).toBe(0o600);
    const admission = await f.cli(["rules", "admission", "nightly"]);
    expect(admission).toMatchObject({ code: 0, stdout: "nightly: admitted\n" });
  });

  it("admits producers' lines, reporting a bad line by its number while the rest go in", async () => {
    const f = fleet();
    await f.start();
    const lines = [
      jsonl([
        { kind: "run_event", type: "tool", harness: "impl", run: "impl#1", action: "edit", paths: ["a.go"] },
      ]),
      "{not json",
      jsonl([{ kind: "run_event", type: "tool", harness: "impl", summary: "the agent said…" }]),
      jsonl([{ kind: "run_event", type: "closed", harness: "impl", run: "impl#1", outcome: "success" }]),
      jsonl([{ kind: "run_event", type: "tool", harness: "impl", paths: ["/etc/passwd"] }]),
      jsonl([
        { kind: "run_event", type: "mark", harness: "impl", mark: "turn-end", at: "2026-12-01T10:00:00Z" },
      ]),
    ].join("\n");
    const r = await f.cli(["journal", "append", "--token-file", f.tokens.get("observer") as string], lines);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("line 2: rejected: not JSON");
    expect(r.stderr).toContain("line 3: rejected: summary is not a run_event field");
    expect(r.stderr).toMatch(
      /line 4: rejected: source observer may not write run_event rows of type "closed"/,
    );
    expect(r.stderr).toContain('line 5: rejected: paths entry "/etc/passwd" must be repo-relative');
    expect(r.stderr).toContain("2 admitted, 4 not");
    const rows = journalRows(f, { kind: "run_event" });
    expect(rows.map((x) => [x.type, x.source])).toEqual([
      ["tool", "observer"],
      ["mark", "observer"],
    ]);
    expect(rows[1]?.event.at).toBe(Date.parse("2026-12-01T10:00:00Z"));
    expect(journalPaths(f)).toEqual(["a.go"]);
  });

  it("refuses a producer without a credential, or with a wrong one, admitting nothing", async () => {
    const f = fleet();
    await f.start();
    const wrong = path.join(f.root, "wrong.token");
    fs.writeFileSync(wrong, `${"w".repeat(40)}\n`, { mode: 0o600 });
    const line = jsonl([{ kind: "run_event", type: "tool", harness: "impl" }]);
    const r = await f.cli(["journal", "append", "--token-file", wrong], line);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/permission|denied/i);
    expect(journalRows(f).filter((r) => r.kind !== "tick")).toEqual([]);
  });

  it("Firings under a hold are refused, and harness rules clear releases it (REQ-11)", async () => {
    const f = fleet({ enforce: ["budget-exhaustion-recurring"] });
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    const r = await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([closed("nightly", 1, "budget_exceeded"), closed("nightly", 2, "budget_exceeded")]),
    );
    expect(r.code).toBe(0);
    await f.until(() => holds(f, { inForce: true }).length === 1, "the hold");
    const refused = await f.cli(["rules", "admission", "nightly"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("held by rule budget-exhaustion-recurring");
    expect(refused.stdout).toContain("harness rules clear nightly");
    expect((await f.cli(["rules", "admission", "impl"])).code).toBe(0);
    const cleared = await f.cli(["rules", "clear", "nightly"]);
    expect(cleared).toMatchObject({ code: 0 });
    expect(cleared.stdout).toContain("released nightly: hold by rule budget-exhaustion-recurring");
    expect((await f.cli(["rules", "admission", "nightly"])).code).toBe(0);
    const again = await f.cli(["rules", "clear", "nightly"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("hold not found");
    expect(holds(f).map((h) => h.release_cause)).toEqual(["operator"]);
    expect(f.daemonStdout).toMatch(
      /"rule":"budget-exhaustion-recurring".*"cause":"operator".*rule hold released/,
    );
  });

  it("delivers rule_fired to the notify hook after the commit, with the supervisor's contract", async () => {
    const f = fleet();
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([closed("impl", 1, "budget_exceeded"), closed("impl", 2, "budget_exceeded")]),
    );
    await f.until(() => f.delivered().some((d) => d.event === "rule_fired"), "a rule_fired delivery");
    const fired = f.delivered().find((d) => d.event === "rule_fired") as Record<string, unknown>;
    expect(fired).toMatchObject({
      version: 1,
      event: "rule_fired",
      harness: "impl",
      rule: "budget-exhaustion-recurring",
      level: "notify",
      declared_level: "hold",
      action: "notify",
    });
    expect(fired.hint).toBe(`harness rules explain ${fired.fire_id as string}`);
    await f.until(() => actions(f, { state: "ok" }).length === 1, "the delivery's outcome");
    const env = fs
      .readdirSync(f.deliveries)
      .filter((x) => x.endsWith(".env"))
      .map((x) => fs.readFileSync(path.join(f.deliveries, x), "utf8"));
    expect(
      env.some(
        (e) => e.includes("HARNESS_NOTIFY_EVENT=rule_fired") && e.includes("HARNESS_NOTIFY_HARNESS=impl"),
      ),
    ).toBe(true);
  });

  it("serves the journal and evaluation counters on /metrics", async () => {
    const f = fleet();
    const said = await f.start();
    const url = /metrics (http:[^\s,]+)/.exec(said)?.[1] as string;
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([closed("impl", 1, "budget_exceeded"), closed("impl", 2, "budget_exceeded")]),
    );
    await f.until(() => fires(f).length === 1, "the fire");
    const text = await (await fetch(url)).text();
    expect(text).toContain('harness_rule_journal_rows_total{source="ledger"} 2');
    expect(text).toContain(
      'harness_rule_fires_total{rule="budget-exhaustion-recurring",mode="active",level="notify"} 1',
    );
    expect(text).toMatch(
      /harness_rule_evaluations_total\{rule="budget-exhaustion-recurring",result="false"\} 1/,
    );
    expect(text).toContain('harness_rules_loaded{state="active"} 6');
    expect(text).toMatch(/harness_rule_journal_lag_seconds \d/);
    expect(text).not.toMatch(/impl#|forge\.example/);
  });

  it("refuses a second daemon, and journal import, on a store a daemon holds", async () => {
    const f = fleet();
    await f.start();
    const second = await f.cli(["daemon", "--socket", path.join(f.root, "run", "other.sock")]);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/store .* is held by process \d+ \(harness daemon/);
    const file = path.join(f.root, "import.jsonl");
    fs.writeFileSync(file, jsonl([{ kind: "tick", type: "tick" }]));
    const imp = await f.cli(["journal", "import", file, "--store", f.storePath]);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toMatch(/is held by process/);
  });

  it("records a notification unknown, not undelivered, when the daemon was killed while its hook ran", async () => {
    const f = fleet({ notifyHook: "mark-then-record" });
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([closed("impl", 1, "budget_exceeded"), closed("impl", 2, "budget_exceeded")]),
    );
    const started = () => fs.readdirSync(f.deliveries).some((x) => x.endsWith(".started"));
    await f.until(started, "the hook's start");
    await f.kill();
    // The hook outlives the daemon and finishes its work.
    await f.until(() => f.delivered().some((d) => d.event === "rule_fired"), "the hook's delivery");
    await f.start();
    expect(actions(f, { action: "notify" }).map((a) => ({ state: a.state, detail: a.detail }))).toEqual([
      { state: "unknown", detail: "the daemon stopped after the action started: it may have run" },
    ]);
  });

  it("records a stop unknown when the daemon was killed after running it, and doctor warns of it", async () => {
    const f = fleet({
      enforce: ["error-streak-stops"],
      recordStops: true,
      rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    });
    await f.start({ HARNESS_FAILPOINTS: "action.afterRun" });
    const tool = {
      kind: "run_event",
      type: "tool",
      harness: "impl",
      run: "impl#1",
      action: "exec",
      is_error: true,
    };
    await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([{ kind: "run_event", type: "opened", harness: "impl", run: "impl#1", trigger: "schedule" }]),
    );
    await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("observer") as string],
      jsonl([tool, tool]),
    );
    await f.exited();
    expect(f.stopped()).toHaveLength(1);
    await f.start();
    expect(actions(f, { action: "stop" }).map((a) => a.state)).toEqual(["unknown"]);
    const r = await f.cli(["doctor"]);
    expect(r.stdout).toContain(
      " warn: 1 rule stop recorded unknown in the last 7 days: the daemon stopped while it ran; see whether its run stopped",
    );
  });

  it("resumes after a SIGKILL: rows committed before it are evaluated after the restart", async () => {
    const f = fleet();
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    await f.cli(["journal", "append", "--token-file", ledger], jsonl([closed("impl", 1, "budget_exceeded")]));
    await f.stop();
    // Rows imported while no daemon runs are, to the evaluator, rows committed after its cursor.
    const file = path.join(f.root, "import.jsonl");
    fs.writeFileSync(file, jsonl([closed("impl", 2, "budget_exceeded")]));
    expect((await f.cli(["journal", "import", file, "--store", f.storePath])).code).toBe(0);
    await f.start();
    await f.until(() => fires(f).length === 1, "the fire of the imported row");
    const [fire] = fires(f);
    expect(fire?.rule).toBe("budget-exhaustion-recurring");
  });
});
