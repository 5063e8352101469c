/**
 * What the crash matrix (`crash-matrix.test.ts`, one daemon killed and restarted) and the failover
 * matrix (`failover-matrix.test.ts`, the leader of several killed) share: the batches that make fires at
 * every level across several commits, how they are sent, when a store has caught up, and what must
 * hold after: nothing lost, nothing repeated, every action's record truthful.
 */
import * as path from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { fold } from "../../../src/core/backtest.js";
import type { JournalRow } from "../../../src/core/journal.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import type { ProducerSource } from "../../../src/core/sources.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { emptyState } from "../../../src/core/state.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { rawPost } from "../../../src/shell/agents/forwarder/raw-http.js";
import {
  HOOK_AT_HEADER,
  HOOK_KEY_HEADER,
  HOOK_PATH_PREFIX,
  LEDGER_TOKEN_HEADER,
  ROW_HEADER,
} from "../../../src/shell/agents/ingest/hook-limits.js";
import { FileEdgeProjector } from "../../../src/shell/graph/file-edges.js";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import {
  actionsInFlight,
  coreRows,
  derivedCursors,
  evaluatorCursor,
  fires,
  holds,
  lastRow,
  actions as recordedActions,
  type StoreAt,
} from "../../support/store-reads.js";
import { ERROR_STREAK_STOPS, type TestFleet } from "../daemon-harness.js";

export const ENFORCE = ["budget-exhaustion-recurring", "restart-into-same-failure"];

export const closed = (harness: string, n: number, outcome: string, cause = "") => ({
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome,
  cause_digest: cause,
});
export const verifyFailed = (harness: string, n: number) => ({
  type: "tool",
  harness,
  run: `${harness}#${n}`,
  action: "verify",
  is_error: true,
  repo: "forge.example/org/reduit",
  digest: "d1",
});

/** Batches that make fires at hold and notify levels across several commits. */
export const BATCHES: readonly {
  readonly source: ProducerSource;
  readonly events: readonly Record<string, unknown>[];
}[] = [
  { source: "ledger", events: [closed("impl", 1, "budget_exceeded"), closed("impl", 2, "budget_exceeded")] },
  { source: "observer", events: [verifyFailed("impl", 3), verifyFailed("impl", 4)] },
  { source: "ledger", events: [1, 2, 3].map((n) => closed("worker", n, "failed", "c1")) },
  { source: "observer", events: [verifyFailed("docs", 1), verifyFailed("docs", 2), verifyFailed("api", 1)] },
  {
    source: "ledger",
    events: [closed("nightly", 1, "budget_exceeded"), closed("nightly", 2, "budget_exceeded")],
  },
  { source: "ledger", events: [1, 2, 3].map((n) => closed("lint", n, "failed", "c2")) },
];

/**
 * The soak varies the order of the batches by seed (printed, FC_SEED to replay); `npm test` keeps the
 * order above, so each point is reached at a known commit.
 */
export const SOAK = process.env.PROPERTY_RUNS_FACTOR !== undefined;
export const BASE_SEED = Number(process.env.FC_SEED ?? 1);
/** Rows a producer appends, or hook calls (`adapter` claude-code) posted to the daemon's hook endpoint. */
export type Batch =
  | (typeof BATCHES)[number]
  | { readonly hooks: readonly { readonly harness: string; readonly payload: Record<string, unknown> }[] };

export function batchesFor(batches: readonly Batch[], seed: number): readonly Batch[] {
  if (!SOAK) return batches;
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const out = [...batches];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as Batch, out[i] as Batch];
  }
  return out;
}

export const opened = (harness: string, n: number) => ({
  type: "opened",
  harness,
  run: `${harness}#${n}`,
  trigger: "schedule",
});
export const failedTool = (harness: string, n: number) => ({
  type: "tool",
  harness,
  run: `${harness}#${n}`,
  action: "exec",
  is_error: true,
});

/** Runs that fail tool calls while in flight (stopped), and one after it closed (target_gone). */
export const STOP_BATCHES: readonly Batch[] = [
  { source: "ledger", events: [opened("impl", 1), opened("docs", 1), opened("api", 1)] },
  { source: "observer", events: [failedTool("impl", 1), failedTool("impl", 1)] },
  { source: "observer", events: [failedTool("docs", 1), failedTool("docs", 1)] },
  { source: "ledger", events: [closed("api", 1, "failed")] },
  { source: "observer", events: [failedTool("api", 1), failedTool("api", 1)] },
  { source: "ledger", events: [opened("lint", 1)] },
  { source: "observer", events: [failedTool("lint", 1), failedTool("lint", 1)] },
];

/** A Claude Code hook call of session `id` of `harness`, as its payload, working in `cwd` (a git repo). */
export const hookCall = (
  harness: string,
  id: string,
  event: string,
  fields: Record<string, unknown> = {},
) => ({
  harness,
  payload: { session_id: id, hook_event_name: event, ...fields },
});
export const editCall = (harness: string, id: string, file: string) =>
  hookCall(harness, id, "PostToolUse", {
    tool_name: "Edit",
    tool_use_id: `toolu-${id}-${file}`,
    tool_input: { file_path: file, old_string: "a", new_string: "b" },
    tool_response: {},
  });

/**
 * Two agents edit two files, their rows through the daemon's hook endpoint (so marked hook-fed): the
 * projector derives edges and collisions in five commits. File paths are relative to the repo, made
 * absolute when sent.
 */
export const EDGE_BATCHES: readonly Batch[] = [
  {
    hooks: [
      hookCall("impl", "s1", "SessionStart", { source: "startup" }),
      hookCall("review", "s7", "SessionStart", { source: "startup" }),
    ],
  },
  { hooks: [editCall("impl", "s1", "a.go"), editCall("impl", "s1", "b.go")] },
  { hooks: [editCall("review", "s7", "a.go")] },
  { hooks: [editCall("review", "s7", "b.go"), editCall("impl", "s1", "c.go")] },
  { hooks: [hookCall("review", "s7", "SessionEnd", { reason: "prompt_input_exit" })] },
  { hooks: [hookCall("impl", "s1", "SessionEnd", { reason: "prompt_input_exit" })] },
];

export interface Scenario {
  readonly name: string;
  readonly batches: readonly Batch[];
  readonly points: readonly string[];
  readonly enforce: readonly string[];
  readonly rules?: readonly { readonly name: string; readonly text: string }[];
  /** The batches mean something only in this order (a run opens before it fails): never shuffled. */
  readonly ordered?: boolean;
  /** The most times each point is reached (three stops: a fourth stop point is never reached). */
  readonly maxNth?: number;
  /**
   * The file-edge projector derives rows: each must be in the journal exactly once. A batch whose answer
   * the crash lost is sent again after the restart, as a hook's spool delivers it again.
   */
  readonly projects?: boolean;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "the starter rules",
    batches: BATCHES,
    // action.afterRun is reached only by a stop command, and no starter rule stops.
    points: [
      "admit.beforeCommit",
      "admit.afterCommit",
      "eval.beforeCommit",
      "eval.afterCommit",
      "action.beforeStart",
      "action.afterStart",
    ],
    enforce: ENFORCE,
  },
  {
    name: "an enforced stop rule",
    batches: STOP_BATCHES,
    points: ["eval.afterCommit", "action.beforeStart", "action.afterStart", "action.afterRun"],
    enforce: [...ENFORCE, "error-streak-stops"],
    rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    ordered: true,
    maxNth: 3,
  },
  {
    name: "the file-edge projector",
    batches: EDGE_BATCHES,
    points: ["derive.beforeCommit", "derive.afterCommit", "eval.afterCommit"],
    enforce: ENFORCE,
    ordered: true,
    maxNth: 3,
    projects: true,
  },
];

/**
 * Each call with its own idempotency key, as a hook's spool delivers it: a call whose answer a crash
 * lost, sent again after the restart, is admitted once.
 */
export async function sendHooks(
  f: TestFleet,
  batch: Extract<Batch, { hooks: unknown }>,
  repo: string,
): Promise<boolean> {
  const observer = await readTokenFile(f.tokens.get("observer") as string);
  const ledger = await readTokenFile(f.tokens.get("ledger") as string);
  try {
    for (const { harness, payload } of batch.hooks) {
      const input = payload.tool_input as { file_path?: string } | undefined;
      const body = {
        ...payload,
        cwd: repo,
        ...(input?.file_path === undefined
          ? {}
          : { tool_input: { ...input, file_path: path.join(repo, input.file_path) } }),
      };
      const key = `${harness}-${payload.session_id}-${payload.hook_event_name}-${payload.tool_use_id ?? ""}`;
      const res = await rawPost(
        f.socketPath,
        `${HOOK_PATH_PREFIX}claude-code?harness=${harness}`,
        {
          "Content-Type": "application/json",
          Authorization: `Bearer ${observer}`,
          [LEDGER_TOKEN_HEADER]: ledger,
          [HOOK_AT_HEADER]: String(Date.now()),
          [HOOK_KEY_HEADER]: key,
        },
        Buffer.from(JSON.stringify(body)),
        5_000,
      );
      if (res.status !== 200 || res.headers.get(ROW_HEADER) !== "admitted") return false;
    }
    return true;
  } catch {
    return false;
  }
}

export async function send(f: TestFleet, batch: Batch, repo: string): Promise<boolean> {
  if ("hooks" in batch) return sendHooks(f, batch, repo);
  const token = await readTokenFile(f.tokens.get(batch.source) as string);
  try {
    await journalClient({ socketPath: f.socketPath }, token).append({
      events: batch.events.map((e) => ({ kind: "run_event", event: e as JsonObject })),
    });
    return true;
  } catch {
    return false;
  }
}

export const settled = (f: TestFleet) => {
  // One read of the store for all four (on PostgreSQL, one mirror of it).
  const at = { storePath: f.storePath };
  const last = lastRow(at).seq;
  return (
    evaluatorCursor(at) === last && actionsInFlight(at) === 0 && derivedCursors(at).every((c) => c === last)
  );
};

/**
 * After a run of `sc` whose daemon was killed at `point` and whose store's evaluation then caught up:
 * fires equal a fold of the core over the admitted rows, no fire is acted on twice, every action that
 * never started is recorded undelivered and every one that started but was not seen to finish unknown.
 * `deliveredTo`: every daemon that ran on the store, whose notify hooks and stop commands are counted.
 */
export function expectNothingLostOrRepeated(
  sc: Scenario,
  point: string,
  at: StoreAt,
  deliveredTo: readonly TestFleet[],
): void {
  const rows = coreRows(at);
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  for (let i = 1; i < rows.length; i++)
    expect((rows[i] as JournalRow).at).toBeGreaterThanOrEqual((rows[i - 1] as JournalRow).at);

  const ruleSet = assembleRuleSet({
    starter: loadStarterPack(),
    policy:
      sc.rules === undefined
        ? []
        : [
            {
              repo: "test",
              loads: sc.rules.map((r) => loadRuleFile(`rules/${r.name}.toml`, r.text)),
            },
          ],
    enforce: sc.enforce,
    shadowPeriod: sc.rules === undefined ? 7 * 86_400_000 : 0,
  });
  const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
  const folded = fold(ruleSet, rows, emptyState, indexedWindows(rows, shapes));
  const expected = folded.outcomes.flatMap((o) => o.fires);
  // Holds intact: those in force are the fold's, each placed by the same fire.
  expect(
    holds(at, { inForce: true })
      .map((h) => `${h.harness} ${h.rule} ${h.fire_id}`)
      .sort(),
  ).toEqual(
    Object.values(folded.state.holds)
      .map((h) => `${h.harness} ${h.rule} ${h.fireId}`)
      .sort(),
  );
  const live = fires(at).map((x) => ({ fire_id: x.fire_id, rule: x.rule, action: x.action }));
  expect(live).toEqual(expected.map((x) => ({ fire_id: x.id, rule: x.rule, action: x.action })));
  expect(live.length).toBeGreaterThan(0);

  if (sc.projects === true) {
    // The projector's rows: each derived once from the other rows, none lost, none repeated.
    const projector = new FileEdgeProjector(() => true);
    const wanted = rows
      .filter((r) => r.kind !== "graph_event")
      .flatMap((r) => projector.derive(r)?.rows.map((d) => d.event) ?? []);
    expect(rows.filter((r) => r.kind === "graph_event").map((r) => r.event)).toEqual(wanted);
    expect(wanted.map((e) => e.type)).toContain("collision_ended");
    expect(live.map((x) => x.rule)).toContain("same-file-collision");
  }

  const deliveries = deliveredTo
    .flatMap((f) => f.delivered())
    .filter((d) => d.event === "rule_fired")
    .map((d) => d.fire_id as string);
  expect(new Set(deliveries).size, "no fire is delivered twice").toBe(deliveries.length);
  const actions = recordedActions(at);
  for (const a of actions)
    expect(["ok", "undelivered", "unknown"], `${a.fire_id} ${a.action}`).toContain(a.state);
  for (const a of actions.filter((x) => x.state === "ok" && x.action === "notify"))
    expect(deliveries).toContain(a.fire_id);
  const recorded = new Map(actions.map((a) => [a.fire_id, a.state]));
  for (const d of deliveries) {
    expect(recorded.has(d), `delivery of ${d} has an action record`).toBe(true);
    expect(recorded.get(d), `delivery of ${d} is not recorded undelivered`).not.toBe("undelivered");
  }
  // Every notify a fire asked for is accounted for: delivered once, or recorded lost.
  const asked = expected.filter(
    (x) => x.mode === "active" && x.action !== "no_target" && x.effectiveLevel !== "annotate",
  );
  expect(
    actions
      .filter((a) => a.action === "notify")
      .map((a) => a.fire_id)
      .sort(),
  ).toEqual(asked.map((x) => x.id).sort());
  // Every stop is run at most once, and each one a fire asked for is run or recorded lost.
  const stops = deliveredTo.flatMap((f) => f.stopped()).map((argv) => argv[3] as string);
  expect(new Set(stops).size, "no run is stopped twice for one fire").toBe(stops.length);
  const stopActions = actions.filter((a) => a.action === "stop");
  expect(stopActions.map((a) => a.fire_id).sort()).toEqual(
    expected
      .filter((x) => x.action === "stop")
      .map((x) => x.id)
      .sort(),
  );
  for (const a of stopActions.filter((x) => x.state === "ok")) expect(stops).toContain(a.fire_id);
  for (const id of stops)
    expect(
      stopActions.find((a) => a.fire_id === id)?.state,
      `the stop run for ${id} is recorded ok or unknown`,
    ).toMatch(/^(ok|unknown)$/);
  if (sc.rules !== undefined) expect(stopActions.length, "the scenario stops runs").toBeGreaterThan(0);
  // Killed before an action started, it is lost; killed after, its outcome is unknown.
  if (point === "action.beforeStart")
    expect(
      actions.some((a) => a.state === "undelivered"),
      "a crash before an action starts loses it",
    ).toBe(true);
  if (point === "action.afterStart" || point === "action.afterRun")
    expect(
      actions.some((a) => a.state === "unknown"),
      "a crash after an action started leaves its outcome unknown",
    ).toBe(true);
}
