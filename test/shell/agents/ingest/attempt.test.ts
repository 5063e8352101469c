/**
 * A live PreToolUse's attempt: its answer waits for the row's evaluation, within `ATTEMPT_BUDGET_MS`;
 * an attempt the rules could not judge (not admitted, or not evaluated in time) is answered by the fail
 * mode, `[agents] on_unreachable`. The daemon's waits on the evaluator's cursor settle in seq order.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunVerdict } from "../../../../src/core/run-verdict.js";
import { AGENTS } from "../../../../src/shell/agents/adapters/registry.js";
import { ATTEMPT_BUDGET_MS, type FailModeAnswer } from "../../../../src/shell/agents/ingest/attempt.js";
import type { HookFormat } from "../../../../src/shell/agents/ingest/hook-format.js";
import { HookIngest } from "../../../../src/shell/agents/ingest/ingest.js";
import { EvaluationWaits } from "../../../../src/shell/daemon/evaluation-waits.js";
import type { AdmitResult } from "../../../../src/shell/journal/admit.js";

interface Setup {
  readonly admitted?: AdmitResult;
  readonly evaluated?: boolean;
  readonly failMode?: "allow" | "deny";
  readonly verdict?: RunVerdict;
}

function ingest(setup: Setup) {
  const waits: { seq: number; budgetMs: number }[] = [];
  const admits: unknown[][] = [];
  const failModes: FailModeAnswer[] = [];
  const handler = new HookIngest({
    admit: async (_source, events) => {
      admits.push([...events]);
      return [setup.admitted ?? { kind: "admitted", seq: 7 }];
    },
    identify: (token) =>
      token === "obs" ? { source: "observer" } : token === "led" ? { source: "ledger" } : undefined,
    verdicts: {
      check: async () => setup.verdict ?? { kind: "allow" },
      peek: async () => setup.verdict ?? { kind: "allow" },
    },
    evaluated: async (seq, budgetMs) => {
      waits.push({ seq, budgetMs });
      return setup.evaluated ?? true;
    },
    failMode: () => setup.failMode ?? "allow",
    runs: { place: async (harness, session) => ({ run: `${harness}#${session}`, done: () => {} }) },
    gitFacts: async () => ({}),
    verifyPatterns: () => [],
    onFailMode: (answer) => failModes.push(answer),
  });
  return { handler, waits, admits, failModes };
}

const call = (handler: HookIngest, agent: string, event: string, at?: number, fail?: string) =>
  handler.handle({
    format: AGENTS.hook(agent) as HookFormat,
    harness: "impl",
    ...(fail === undefined ? {} : { fail }),
    observerToken: "obs",
    ledgerToken: "led",
    body: new TextEncoder().encode(
      JSON.stringify({
        session_id: "s1",
        hook_event_name: event,
        tool_name: "Bash",
        tool_input: { command: "git push --force" },
        tool_use_id: "toolu_1",
        tool_response: {},
      }),
    ),
    ...(at === undefined ? {} : { at }),
  });

const denial = (answer: string): string | undefined =>
  answer === "" ? undefined : JSON.parse(answer).hookSpecificOutput?.permissionDecisionReason;

describe("a live attempt", () => {
  it("is an attempt_event row, and its answer waits for that row's evaluation within the budget", async () => {
    for (const agent of ["claude-code", "codex"]) {
      const { handler, waits, admits } = ingest({});
      const r = await call(handler, agent, "PreToolUse");
      expect(r).toMatchObject({ status: 200, answer: "", row: "admitted" });
      expect(admits[0]).toMatchObject([
        { kind: "attempt_event", type: "tool", tool: "Bash", action: "exec" },
      ]);
      expect(admits[0]?.[0]).not.toHaveProperty("is_error");
      expect(waits).toEqual([{ seq: 7, budgetMs: ATTEMPT_BUDGET_MS }]);
    }
  });

  it("then asks the verdict: a stop the evaluation recorded refuses the very call", async () => {
    const { handler } = ingest({
      verdict: {
        kind: "stopped",
        rule: "no-force-push",
        fireId: "f-7-0",
        by: "rule",
        run: "impl#s1",
        resumeCommand: "harness rules resume impl#s1",
        released: false,
      },
    });
    const reason = denial((await call(handler, "claude-code", "PreToolUse")).answer);
    expect(reason).toContain("rule no-force-push (fire f-7-0)");
    expect(reason).toContain("ask the operator");
  });

  it("not evaluated within the budget is answered by the fail mode", async () => {
    const denied = await call(ingest({ evaluated: false, failMode: "deny" }).handler, "codex", "PreToolUse");
    expect(denied.status).toBe(200);
    expect(denial(denied.answer)).toContain('on_unreachable = "deny"');
    expect(denied.note).toContain(`not evaluated within ${ATTEMPT_BUDGET_MS} ms`);
    const allowed = await call(
      ingest({ evaluated: false, failMode: "allow" }).handler,
      "codex",
      "PreToolUse",
    );
    expect(allowed).toMatchObject({ status: 200, answer: "" });
    // Allowed by the fail mode, the run's verdict still stands: a hold refuses.
    const held = await call(
      ingest({
        evaluated: false,
        failMode: "allow",
        verdict: { kind: "held", rule: "r", fireId: "f-1-0", clearCommand: "harness rules clear impl" },
      }).handler,
      "codex",
      "PreToolUse",
    );
    expect(denial(held.answer)).toContain("harness rules clear impl");
  });

  it("not evaluated within the budget is answered by the harness's own fail mode where its hook names one", async () => {
    const closed = await call(
      ingest({ evaluated: false, failMode: "allow" }).handler,
      "codex",
      "PreToolUse",
      undefined,
      "closed",
    );
    expect(denial(closed.answer)).toContain("this harness's fail mode (--fail closed) refuses it");
    const open = await call(
      ingest({ evaluated: false, failMode: "deny" }).handler,
      "codex",
      "PreToolUse",
      undefined,
      "open",
    );
    expect(open).toMatchObject({ status: 200, answer: "" });
    const bad = await call(ingest({}).handler, "codex", "PreToolUse", undefined, "maybe");
    expect(bad).toMatchObject({ status: 400, note: "the fail parameter must be closed or open" });
  });

  it("that cannot be admitted (dropped, refused, not stored) is answered by the fail mode, on a 200", async () => {
    const outcomes: AdmitResult[] = [
      { kind: "dropped" },
      { kind: "rejected", code: "too_long", reason: "session is too long" },
      { kind: "rejected", code: "store_error", reason: "disk full" },
    ];
    for (const admitted of outcomes) {
      const { handler, waits } = ingest({ admitted, failMode: "deny" });
      const r = await call(handler, "claude-code", "PreToolUse");
      expect(r.status, admitted.kind).toBe(200);
      expect(denial(r.answer)).toContain("could not judge this tool call");
      expect(waits).toEqual([]);
    }
  });

  it("of a run a stop already reached records nothing and is refused", async () => {
    const { handler, admits } = ingest({
      verdict: {
        kind: "stopped",
        rule: "r",
        fireId: "f-1-0",
        by: "rule",
        run: "claude-code#s1",
        resumeCommand: "harness rules resume claude-code#s1",
        released: false,
      },
      failMode: "deny",
    });
    const r = await call(handler, "claude-code", "PreToolUse");
    expect(r.row).toBe("none");
    expect(admits).toEqual([]);
    expect(denial(r.answer)).toContain("stopped by rule r");
  });
});

describe("an attempt its fail mode answered is a decision the daemon took (issue 33: exported)", () => {
  it("the budget ran out: told with its row, the mode's result and where the mode comes from", async () => {
    const denied = ingest({ evaluated: false, failMode: "deny" });
    await call(denied.handler, "claude-code", "PreToolUse");
    expect(denied.failModes).toEqual([
      {
        harness: "impl",
        run: "impl#s1",
        tool: "Bash",
        seq: 7,
        result: "deny",
        source: "global",
        reason: `not evaluated within ${ATTEMPT_BUDGET_MS} ms`,
      },
    ]);
    const open = ingest({ evaluated: false, failMode: "deny" });
    await call(open.handler, "codex", "PreToolUse", undefined, "open");
    expect(open.failModes).toMatchObject([{ result: "allow", source: "harness", seq: 7 }]);
  });

  it("not admitted: told without a row, with why", async () => {
    const dropped = ingest({ admitted: { kind: "dropped" }, failMode: "deny" });
    await call(dropped.handler, "claude-code", "PreToolUse");
    expect(dropped.failModes).toEqual([
      expect.objectContaining({
        seq: undefined,
        result: "deny",
        reason: "the journal's queue is full; the row was dropped",
      }),
    ]);
  });

  it("judged in time, answered by the run's verdict, or not live: nothing is told", async () => {
    const judged = ingest({ failMode: "deny" });
    await call(judged.handler, "claude-code", "PreToolUse");
    const held = ingest({
      evaluated: false,
      failMode: "allow",
      verdict: { kind: "held", rule: "r", fireId: "f-1-0", clearCommand: "harness rules clear impl" },
    });
    await call(held.handler, "codex", "PreToolUse");
    const spooled = ingest({ evaluated: false, failMode: "deny" });
    await call(spooled.handler, "claude-code", "PreToolUse", 1_700_000_000_000);
    await call(spooled.handler, "claude-code", "PostToolUse");
    expect([judged.failModes, held.failModes, spooled.failModes]).toEqual([[], [], []]);
  });
});

describe("calls that are not live attempts", () => {
  it("a spooled PreToolUse and a PostToolUse are admitted without waiting for their evaluation", async () => {
    const { handler, waits, admits } = ingest({ evaluated: false, failMode: "deny" });
    expect((await call(handler, "claude-code", "PreToolUse", 1_700_000_000_000)).answer).toBe("");
    expect((await call(handler, "claude-code", "PostToolUse")).answer).toBe("");
    expect(admits.map((a) => (a[0] as { kind: string }).kind)).toEqual(["attempt_event", "run_event"]);
    expect(waits).toEqual([]);
  });
});

describe("the daemon's waits on the evaluator's cursor", () => {
  afterEach(() => vi.useRealTimers());

  it("settle true once the cursor reaches their row, false when the budget runs out or at close", async () => {
    vi.useFakeTimers();
    const waits = new EvaluationWaits();
    const late = waits.wait(9, 2_000);
    const first = waits.wait(3, 2_000);
    const second = waits.wait(5, 2_000);
    waits.reached(4);
    expect(await first).toBe(true);
    waits.reached(5);
    expect(await second).toBe(true);
    vi.advanceTimersByTime(2_000);
    expect(await late).toBe(false);
    const closing = waits.wait(11, 2_000);
    waits.close();
    expect(await closing).toBe(false);
  });
});
