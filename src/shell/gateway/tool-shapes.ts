/**
 * What the gateway's tools answer, as data and as the JSON Schemas their `outputSchema`s declare: one
 * convention across every tool, so an agent parses an answer without guessing. Keys are snake_case;
 * ids (fire ids, proposal ids, runs, hashes) are strings; journal seqs and counts are JSON numbers (a
 * seq is far below 2^53); instants are RFC 3339 strings in UTC, under keys named `at`, `now`, `since`,
 * `until` or ending in `_at`, `_since` or `_until`; durations are numbers of ms, under keys ending in
 * `_ms`. A field that does not apply is left out, never sent empty or 0. The mappers below turn
 * RuleService's messages (int64s as bigints, times as epoch ms) into that convention.
 */
import { z } from "zod";
import type {
  ActionOutcome,
  ExplainFireResponse,
  FireInfo,
  GetRuleResponse,
  GuardDecision,
  HoldInfo,
  HoldRecord,
  PrimitiveCallInfo,
  RuleInfo,
} from "../rpc/gen/harness/v1/rules_pb.js";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** An instant: RFC 3339, UTC. */
export const TIME = z.string().regex(RFC3339).meta({ format: "date-time" });
const COUNT = z.number().int().min(0);
const SEQ = COUNT.describe("A journal seq (evidence id seq:<n>).");
/** A value of a stored event: any JSON (an older store may hold what admission now refuses). */
const JSON_VALUE = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);

/** An epoch-ms time as RFC 3339, or nothing for 0 (RuleService's "none"). */
export function timeOf(ms: bigint | number): string | undefined {
  const n = Number(ms);
  return n === 0 ? undefined : new Date(n).toISOString();
}

/** `key: value` unless the value is empty, 0 or undefined: a field that does not apply is left out. */
function present<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined && v !== "" && v !== 0),
  ) as Partial<T>;
}

export const RULE = z.object({
  name: z.string(),
  source: z.string().describe("starter or policy:<repo>."),
  file: z.string(),
  on: z.string().optional().describe("Absent for a disabled rule."),
  declared_level: z.string().optional(),
  effective_level: z.string().optional(),
  enforced: z.boolean(),
  state: z.enum(["active", "shadow", "disabled"]),
  disabled_reason: z.string().optional(),
  disabled_message: z.string().optional(),
  hash: z.string().optional(),
  shadow_since: TIME.optional(),
  shadow_until: TIME.optional(),
  cooldown_ms: COUNT.optional(),
  target: z.string().optional(),
  estimated_cost: COUNT.optional(),
  fires_24h: COUNT.describe("Fires of this hash in the last 24 hours, over every harness."),
  fires_7d: COUNT.describe("Fires of this hash in the last 7 days, over every harness."),
  suppressed: COUNT,
  last_fire_id: z
    .string()
    .optional()
    .describe("The newest fire of this hash, when it is one you may explain (explain_fire)."),
  last_fire_at: TIME.optional(),
});

export function ruleOf(r: RuleInfo): z.infer<typeof RULE> {
  return {
    name: r.name,
    source: r.source,
    file: r.file,
    enforced: r.enforced,
    state: r.state as z.infer<typeof RULE>["state"],
    fires_24h: r.fires24h,
    fires_7d: r.fires7d,
    suppressed: Number(r.suppressed),
    ...present({
      on: r.on,
      declared_level: r.declaredLevel,
      effective_level: r.effectiveLevel,
      disabled_reason: r.disabledReason,
      disabled_message: r.disabledMessage,
      hash: r.hash,
      shadow_since: timeOf(r.shadowSinceMs),
      shadow_until: timeOf(r.shadowUntilMs),
      cooldown_ms: Number(r.cooldownMs),
      target: r.target,
      estimated_cost: Number(r.estimatedCost),
      last_fire_id: r.lastFireId,
      last_fire_at: timeOf(r.lastFireAtMs),
    }),
  };
}

export const HOLD = z.object({
  harness: z.string(),
  rule: z.string(),
  hash: z.string(),
  fire_id: z.string(),
  since: TIME.describe("When the hold was placed: the admission time of the row that fired."),
});

export const holdOf = (h: HoldInfo): z.infer<typeof HOLD> => ({
  harness: h.harness,
  rule: h.rule,
  hash: h.hash,
  fire_id: h.fireId,
  since: timeOf(h.sinceMs) ?? new Date(0).toISOString(),
});

export const GET_RULE = z.object({
  rule: RULE,
  when: z.string().optional().describe("The normalized `when`; absent for a disabled rule."),
  description: z.string().optional(),
  message: z.string().optional().describe("The message template."),
  holds: z.array(HOLD),
  primitive_calls: COUNT,
});

export const getRuleOf = (r: GetRuleResponse, holds: readonly HoldInfo[]): z.infer<typeof GET_RULE> => ({
  rule: ruleOf(r.rule as RuleInfo),
  holds: holds.map(holdOf),
  primitive_calls: r.primitiveCalls,
  ...present({ when: r.when, description: r.description, message: r.message }),
});

const ACTION = z.object({
  action: z.string().describe("notify or stop."),
  state: z.string(),
  detail: z.string().optional(),
  updated_at: TIME.optional(),
});

const actionOf = (a: ActionOutcome): z.infer<typeof ACTION> => ({
  action: a.action,
  state: a.state,
  ...present({ detail: a.detail, updated_at: timeOf(a.updatedAtMs) }),
});

export const FIRE = z.object({
  fire_id: z.string().describe("f-<seq>-<n>: explain_fire's argument, and an evidence id."),
  rule: z.string(),
  hash: z.string(),
  seq: SEQ,
  at: TIME.describe("The row's admission time: the `now` the rule saw."),
  kind: z.string(),
  type: z.string(),
  target_kind: z.string().optional().describe("run, harness, node or fleet; absent for no_target."),
  target_key: z.string().optional(),
  harness: z.string().optional(),
  run: z.string().optional(),
  declared_level: z.string(),
  effective_level: z.string(),
  mode: z.string().describe("shadow or active."),
  action: z.string(),
  message: z.string(),
  actions: z.array(ACTION),
});

export const fireOf = (f: FireInfo): z.infer<typeof FIRE> => ({
  fire_id: f.fireId,
  rule: f.rule,
  hash: f.hash,
  seq: Number(f.seq),
  at: timeOf(f.atMs) ?? new Date(0).toISOString(),
  kind: f.kind,
  type: f.type,
  declared_level: f.declaredLevel,
  effective_level: f.effectiveLevel,
  mode: f.mode,
  action: f.action,
  message: f.message,
  actions: f.actions.map(actionOf),
  ...present({ target_kind: f.targetKind, target_key: f.targetKey, harness: f.harness, run: f.run }),
});

const PRIMITIVE = z.object({
  fn: z.enum(["count", "distinct", "exists"]),
  field: z.string().optional().describe("distinct's field."),
  selector: z.record(z.string(), z.union([z.string(), z.boolean()])),
  within_ms: COUNT,
  number: COUNT.optional().describe("count's and distinct's answer."),
  exists: z.boolean().optional().describe("exists's answer."),
});

const primitiveOf = (p: PrimitiveCallInfo): z.infer<typeof PRIMITIVE> => ({
  fn: p.fn as z.infer<typeof PRIMITIVE>["fn"],
  selector: Object.fromEntries(p.selector.map((t) => [t.field, t.value.value ?? ""])),
  within_ms: Number(p.withinMs),
  ...(p.field === "" ? {} : { field: p.field }),
  ...(p.result.case === "number" ? { number: p.result.value } : {}),
  ...(p.result.case === "truth" ? { exists: p.result.value } : {}),
});

/** A decision no rule made: the loop guard's stop or the stale run closer's close (`journal:<seq>`). */
const GUARD = z.object({
  kind: z.enum(["loop_stopped", "stale_closed"]),
  harness: z.string(),
  run: z.string(),
  tool: z.string().optional().describe("loop_stopped: the identical call's tool."),
  digest: z.string().optional().describe("loop_stopped: the identical call's input digest."),
  threshold: COUNT.optional().describe(
    "loop_stopped: identical calls in an unbroken streak that trip the guard.",
  ),
  streak_rows: COUNT.optional().describe("loop_stopped: the streak's tool rows the journal still holds."),
  first_seq: SEQ.optional(),
  first_at: TIME.optional(),
  last_seq: SEQ.optional(),
  last_at: TIME.optional(),
  delivered_at: TIME.optional().describe("When the stop was told to the agent; absent: not yet."),
  released_at: TIME.optional().describe("When the operator released it; absent: not released."),
  sentence: z.string().describe("What the agent is told, or what the closer did and why."),
  resume_command: z.string().optional().describe("The operator's command that lets the session start again."),
});

export const EXPLAIN_FIRE = z.object({
  fire: FIRE.optional().describe("The fire; absent when the id is journal:<seq> of a guard's decision."),
  guard: GUARD.optional().describe("Set instead of fire for journal:<seq>, a decision no rule made."),
  when: z.string().optional().describe("The rule's normalized `when`, when that rule and hash are in force."),
  row: z
    .object({
      seq: SEQ,
      kind: z.string(),
      type: z.string(),
      at: TIME,
      source: z.string(),
      event: z
        .record(z.string(), JSON_VALUE)
        .describe("The row's event fields as stored; its `at` is the source's own time."),
    })
    .optional()
    .describe("The journal row the rule evaluated; absent when retention pruned it."),
  row_pruned: z.boolean(),
  now: TIME,
  primitives: z.array(PRIMITIVE),
  level_derivation: z.string(),
});

export function explainFireOf(r: ExplainFireResponse): z.infer<typeof EXPLAIN_FIRE> {
  const row = r.row;
  return {
    ...(r.fire === undefined ? {} : { fire: fireOf(r.fire) }),
    ...(r.guard === undefined ? {} : { guard: guardOf(r.guard) }),
    row_pruned: r.rowPruned,
    now: timeOf(r.nowMs) ?? new Date(0).toISOString(),
    primitives: r.primitives.map(primitiveOf),
    level_derivation: r.levelDerivation,
    ...present({ when: r.when }),
    ...(row === undefined
      ? {}
      : {
          row: {
            seq: Number(row.seq),
            kind: row.kind,
            type: row.type,
            at: timeOf(row.atMs) ?? new Date(0).toISOString(),
            source: row.source,
            event: eventOf(row.event ?? {}),
          },
        }),
  };
}

function guardOf(g: GuardDecision): z.infer<typeof GUARD> {
  return {
    kind: g.kind === "stale_closed" ? "stale_closed" : "loop_stopped",
    harness: g.harness,
    run: g.run,
    sentence: g.sentence,
    ...present({
      tool: g.tool,
      digest: g.digest,
      threshold: g.threshold,
      streak_rows: g.streakRows,
      first_seq: Number(g.firstSeq),
      first_at: timeOf(g.firstAtMs),
      last_seq: Number(g.lastSeq),
      last_at: timeOf(g.lastAtMs),
      delivered_at: timeOf(g.deliveredAtMs),
      released_at: timeOf(g.releasedAtMs),
      resume_command: g.resumeCommand,
    }),
  };
}

/** A stored event, its epoch-ms `at` as RFC 3339 like every other time. */
function eventOf(event: Record<string, unknown>): Record<string, z.infer<typeof JSON_VALUE>> {
  const { at, ...rest } = event;
  return {
    ...(rest as Record<string, z.infer<typeof JSON_VALUE>>),
    ...(typeof at === "number" ? { at: new Date(at).toISOString() } : {}),
  };
}

export const HOLD_RECORD = HOLD.extend({
  cooldown_ms: COUNT.describe("How long the rule's condition must stay false on every tick to release it."),
  false_since: TIME.optional().describe("Since when the condition has been false on every tick."),
  released_at: TIME.optional().describe("Absent while the hold is in force."),
  release_cause: z.string().optional().describe("condition_cleared, operator or reload."),
});

export const holdRecordOf = (h: HoldRecord): z.infer<typeof HOLD_RECORD> => ({
  ...holdOf(h.hold as HoldInfo),
  cooldown_ms: Number(h.cooldownMs),
  ...present({
    false_since: timeOf(h.falseSinceMs),
    released_at: timeOf(h.releasedAtMs),
    release_cause: h.releaseCause,
  }),
});

/** A page of a list: `truncated` when more matched, and then `next_cursor`, the `cursor` that continues it. */
export const page = <T extends z.ZodType>(key: string, item: T) =>
  z.object({
    [key]: z.array(item),
    truncated: z.boolean(),
    next_cursor: z
      .string()
      .optional()
      .describe("Present when truncated: pass it as cursor, with the same other arguments, for the rest."),
  });
