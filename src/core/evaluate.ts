/**
 * `evaluate(ruleSet, row, state, window) → RowOutcome`: one journal row through every rule whose `on`
 * matches it, in name order, with `now` = the row's `at` (SPEC-0029 REQ-7 to REQ-13). Pure: the answer
 * is a function of its inputs, the window reader being bound to rows with seq at most this row's. The
 * shell commits the delta, then carries out the actions each fire planned; backtest folds the same
 * function over the same rows.
 */

import { type Activation, CelError, COST_EXCEEDED, type LaidOut } from "../cel/index.js";
import { COST_LIMIT, type LoadedRule } from "./compile-rule.js";
import { MINUTE } from "./durations.js";
import { StoreError, WINDOW } from "./environments.js";
import { fireId } from "./fire-id.js";
import { isHookFed } from "./hook-runs.js";
import type { EventFields, JournalRow } from "./journal.js";
import { EVENT_LAYOUTS, type EventKind } from "./kinds.js";
import { renderMessage } from "./message.js";
import type { Fire, Mode, PrimitiveCall, RowOutcome, RuleEvaluation } from "./outcome.js";
import { planActions } from "./plan-actions.js";
import type { PlannedRule, RulePlan } from "./rule-plan.js";
import {
  type ActiveRule,
  effectiveLevel as effectiveLevelOf,
  planOf,
  type RuleSet,
  skipsShadow,
} from "./rule-set.js";
import { type CooldownEntry, type CoreState, holdKey, type StateOp, StateView } from "./state.js";
import { type ResolvedTarget, resolveTarget } from "./targets.js";
import type { IndexedField, Selector, WindowReader } from "./window.js";

/** A reader that records every call, so a fire can say what each primitive saw. */
class RecordingReader implements WindowReader {
  readonly calls: PrimitiveCall[] = [];
  constructor(private readonly reader: WindowReader) {}
  count(selector: Selector, withinMs: number): number {
    const result = this.reader.count(selector, withinMs);
    this.calls.push({ fn: "count", selector, withinMs, result });
    return result;
  }
  distinct(field: IndexedField, selector: Selector, withinMs: number): number {
    const result = this.reader.distinct(field, selector, withinMs);
    this.calls.push({ fn: "distinct", field, selector, withinMs, result });
    return result;
  }
  exists(selector: Selector, withinMs: number): boolean {
    const result = this.reader.exists(selector, withinMs);
    this.calls.push({ fn: "exists", selector, withinMs, result });
    return result;
  }
}

/**
 * The primitive calls behind a fire, by evaluating its rule again over the same row with a reader that
 * records them. Evaluation is a function of the row and the window, so the second run makes the same
 * calls with the same answers; only fires pay for the record, not the dozens of evaluations a row has.
 */
function primitiveCalls(
  rule: LoadedRule,
  row: JournalRow,
  window: WindowReader,
  limit: number,
): readonly PrimitiveCall[] {
  const recorder = new RecordingReader(window);
  rule.program.evaluate(activation(row.kind, row.event, row.at, recorder), limit);
  return recorder.calls;
}

type Verdict =
  | { readonly kind: "value"; readonly value: boolean }
  | { readonly kind: "error"; readonly store: boolean; readonly message: string }
  | { readonly kind: "cost_exceeded" };

/**
 * The activation of one row: the same for every rule the row meets. The event is laid out in its
 * kind's layout, once, so each rule reads a field from its slot; its values and `now` go in as they
 * are: CEL reads a timestamp given in ms since the epoch (the event's `at`, `now`) as a Timestamp when
 * a rule reads it, and most rules never read either.
 */
function activation(kind: EventKind, event: EventFields, now: number, reader: WindowReader): Activation {
  return activationOf(EVENT_LAYOUTS[kind].layOut(event), now, reader);
}

const activationOf = (event: LaidOut, now: number, reader: WindowReader): Activation => ({
  event,
  now,
  [WINDOW]: reader,
});

function run(rule: LoadedRule, vars: Activation, limit: number): Verdict {
  const v = rule.program.evaluateValue(vars, limit);
  if (v === false) return FALSE;
  if (v === true) return TRUE;
  if (v === COST_EXCEEDED) return { kind: "cost_exceeded" };
  if (v instanceof CelError) return { kind: "error", store: v instanceof StoreError, message: v.message };
  return { kind: "error", store: false, message: `when gave a ${typeof v}, not a bool` };
}

// Shared: almost every evaluation ends in one of these, and a row evaluates dozens of rules.
const TRUE: Verdict = { kind: "value", value: true };
const FALSE: Verdict = { kind: "value", value: false };

export function evaluate(
  ruleSet: RuleSet,
  row: JournalRow,
  state: CoreState,
  window: WindowReader,
): RowOutcome {
  const fires: Fire[] = [];
  const evaluations: RuleEvaluation[] = [];
  const delta: StateOp[] = [];
  // Each op lands in the delta and in the view later rules of this row see; `state` is not touched.
  const current = new StateView(state);
  const emit = (op: StateOp) => {
    delta.push(op);
    current.apply(op);
  };

  // A run's opening, closing or loop-guard trip changes what is in flight before any rule sees the
  // row: a rule reacting to the trip finds no run left to stop, so the harness is stopped once.
  trackRuns(row, current, emit);
  // Cooldowns that ran out by this row go first, so a fire on this row sets a fresh one that stays.
  if (row.kind === "tick" && sweepsCooldowns(row.at)) expireCooldowns(row, state, emit);
  const plan = planOf(ruleSet);
  // Shadow clocks run on journal rows of every kind: a rule for a rare kind is not kept in shadow. Once
  // every rule's shadow has completed in these records, no row changes them: the walk is skipped.
  if (!plan.shadowsSettled(state.shadows)) {
    let settled = true;
    for (const p of plan.all)
      settled = advanceShadow(p.active, ruleSet.shadowPeriod, row, current, emit) && settled;
    if (settled) plan.settle(state.shadows);
  }
  const limit = ruleSet.costLimit ?? COST_LIMIT;
  const anyCostExceeded = current.anyCostExceeded();
  // Built for the first rule the row meets: most rows meet none (a backtest runs one rule over every row).
  let event: LaidOut | undefined;
  let vars: Activation | undefined;
  // A row of a kind no rule is written for (only a hand-built row can have one) meets no rule.
  const rules = plan.byKind[row.kind] ?? [];
  for (let i = 0; i < rules.length; i++) {
    const planned = rules[i] as PlannedRule;
    const { active } = planned;
    const { rule } = active;
    if (anyCostExceeded && current.costExceeded(rule.hash)) continue;
    if (planned.turnsAway(row.event.type, limit)) {
      evaluations.push(active.falseEvaluation);
      continue;
    }
    event ??= EVENT_LAYOUTS[row.kind].layOut(row.event);
    if (planned.falseOn(event.values, limit)) {
      evaluations.push(active.falseEvaluation);
      continue;
    }
    vars ??= activationOf(event, row.at, window);
    const verdict = run(rule, vars, limit);
    if (verdict === FALSE) {
      evaluations.push(active.falseEvaluation);
      continue;
    }
    const name = rule.spec.name;
    const hash = rule.hash;
    if (verdict.kind === "cost_exceeded") {
      emit({ op: "cost_exceeded", hash: rule.hash });
      evaluations.push({ rule: name, hash, result: "cost_exceeded" });
      continue;
    }
    if (verdict.kind === "error") {
      evaluations.push({
        rule: name,
        hash,
        result: verdict.store ? "store_error" : "eval_error",
        detail: verdict.message,
      });
      continue;
    }
    const target = resolveTarget(rule.spec.target, row.kind, row.event);
    const ckey = planned.cooldownKey(target?.key ?? "");
    const cooling = current.cooldown(ckey);
    if (cooling !== undefined && row.at < cooling.until) {
      evaluations.push(planned.suppressedBy(cooling));
      continue;
    }
    const calls = primitiveCalls(rule, row, window, limit);
    const fire = makeFire(active, row, target, calls, current, emit, fires.length);
    emit({ op: "cooldown", key: ckey, entry: { until: row.at + rule.spec.cooldown, fireId: fire.id } });
    fires.push(fire);
    evaluations.push({ rule: name, hash, result: "fired" });
  }

  const releases = row.kind === "tick" ? reevaluateHolds(ruleSet, plan, row, current, window, emit) : [];
  return { fires, evaluations, releases, delta };
}

/**
 * REQ-9: a hash's shadow starts at the first row after it is first loaded and completes once
 * `shadow_period` has passed in journal time (at once for starter rules and a period of 0); a completed
 * hash stays active whenever it is loaded again.
 */
function advanceShadow(
  active: ActiveRule,
  shadowPeriod: number,
  row: JournalRow,
  state: StateView,
  emit: (op: StateOp) => void,
): boolean {
  const { hash } = active.rule;
  let shadow = state.shadow(hash);
  if (shadow?.completed === true) return true;
  if (shadow === undefined) {
    emit({ op: "shadow_since", hash, since: row.at });
    shadow = state.shadow(hash);
  }
  if (shadow === undefined) return false;
  if (skipsShadow(active, shadowPeriod) || row.at >= shadow.since + shadowPeriod) {
    emit({ op: "shadow_completed", hash });
  }
  // Completed on this row: the records are settled only once a later row finds them so.
  return false;
}

function makeFire(
  active: ActiveRule,
  row: JournalRow,
  target: ResolvedTarget | undefined,
  primitives: readonly PrimitiveCall[],
  state: StateView,
  emit: (op: StateOp) => void,
  index: number,
): Fire {
  const { rule } = active;
  const mode: Mode = state.shadow(rule.hash)?.completed === true ? "active" : "shadow";
  const declaredLevel = rule.spec.level;
  const effectiveLevel = effectiveLevelOf(active);
  const id = fireId(row.seq, index);
  const name = rule.spec.name;
  const plan = planActions(effectiveLevel, mode, target, {
    held: (harness) => state.hold(holdKey(harness, name)) !== undefined,
    runInFlight: (harness) => state.run(harness),
    sessionsOf: (harness) => state.sessionsOf(harness),
  });
  // A planned hold is placed by a state op, so the later rules of the row, and later rows, see it.
  for (const a of plan.actions) {
    if (a.kind !== "hold") continue;
    const hold = {
      rule: name,
      hash: rule.hash,
      harness: a.harness,
      fireId: id,
      since: row.at,
      cooldown: rule.spec.cooldown,
      event: row.event,
    };
    emit({ op: "hold", key: holdKey(a.harness, name), hold });
  }
  return {
    id,
    rule: name,
    hash: rule.hash,
    seq: row.seq,
    at: row.at,
    kind: row.kind,
    type: row.event.type,
    target,
    declaredLevel,
    effectiveLevel,
    mode,
    action: plan.action,
    actions: plan.actions,
    message: renderMessage(rule.spec.message, {
      rule: name,
      level: effectiveLevel,
      at: row.at,
      event: row.event,
    }),
    primitives,
  };
}

/** REQ-11 (a): on every tick, each hold re-evaluates its rule with the firing event and the tick's now. */
function reevaluateHolds(
  ruleSet: RuleSet,
  plan: RulePlan,
  row: JournalRow,
  state: StateView,
  window: WindowReader,
  emit: (op: StateOp) => void,
): RowOutcome["releases"] {
  const releases: RowOutcome["releases"][number][] = [];
  const { byHash } = plan;
  for (const [key, hold] of state.holds().sort(([a], [b]) => (a < b ? -1 : 1))) {
    const rule = byHash.get(hold.hash);
    if (rule === undefined) continue;
    const verdict = run(
      rule,
      activation(rule.spec.on, hold.event, row.at, window),
      ruleSet.costLimit ?? COST_LIMIT,
    );
    if (verdict.kind === "value" && verdict.value === false) {
      const since = hold.falseSince ?? row.at;
      if (hold.falseSince === undefined) emit({ op: "hold_false_since", key, at: since });
      if (row.at - since >= hold.cooldown) {
        emit({ op: "release", key, cause: "condition_cleared" });
        releases.push({
          harness: hold.harness,
          rule: hold.rule,
          fireId: hold.fireId,
          cause: "condition_cleared",
        });
      }
    } else if (hold.falseSince !== undefined) emit({ op: "hold_false_since", key, at: undefined });
  }
  return releases;
}

/**
 * Whether a tick sweeps out the cooldowns that have run out: the ticks in the first minute of each
 * quarter hour of journal time, about one tick in fifteen, since a sweep walks every cooldown. An entry
 * left past its `until` suppresses nothing (a match compares `until` with its own `at`); it only waits
 * for the next sweep (a quarter hour later, while ticks come every minute).
 */
const sweepsCooldowns = (at: number): boolean => at % COOLDOWN_SWEEP_EVERY < MINUTE;
const COOLDOWN_SWEEP_EVERY = 15 * MINUTE;

/** Cooldowns that have run out are dropped, so the state holds only live ones (and a few just ended). */
function expireCooldowns(row: JournalRow, state: CoreState, emit: (op: StateOp) => void): void {
  // A sweep walks every cooldown: for-in, not Object.entries, so the walk allocates nothing.
  for (const key in state.cooldowns)
    if ((state.cooldowns[key] as CooldownEntry).until <= row.at) emit({ op: "cooldown_expired", key });
}

/** The run_event types `trackRuns` reads the event of. */
const RUN_TRACKING_TYPES: ReadonlySet<string> = new Set(["opened", "closed", "loop_stopped"]);

/** Whether `trackRuns` reads the event of a row of this kind and type: its run rows and every attempt. */
const tracksRuns = (kind: EventKind, type: string): boolean =>
  (kind === "run_event" && RUN_TRACKING_TYPES.has(type)) || kind === "attempt_event";

/**
 * Whether `evaluate` reads anything of a row of this kind and type but its `type` and the fields
 * `known` gives (`undefined` for a field not known): it tracks runs from it, or some rule of its kind
 * is turned away neither by its type guard nor by a field guard on a known field. A backtest leaves the
 * other rows' events undecoded, carrying only their type and those known fields, on which every rule
 * of the kind is turned away as it was here.
 */
export function evaluateReadsEvent(
  ruleSet: RuleSet,
  kind: EventKind,
  type: string,
  known: (field: string) => string | boolean | undefined = () => undefined,
): boolean {
  if (tracksRuns(kind, type)) return true;
  const limit = ruleSet.costLimit ?? COST_LIMIT;
  const field = (f: string) => (f === "type" ? type : known(f));
  return (planOf(ruleSet).byKind[kind] ?? []).some(
    (p) => !p.turnsAway(type, limit) && !p.falseOnKnown(field, limit),
  );
}

/**
 * The event types of this kind whose rows `evaluateReadsEvent` may answer true for, or `"any"`: the
 * run-tracking types, and each rule's type guard (a rule without one may read any type).
 */
export function typesRead(ruleSet: RuleSet, kind: EventKind): ReadonlySet<string> | "any" {
  const types = new Set(kind === "run_event" ? RUN_TRACKING_TYPES : kind === "attempt_event" ? ["tool"] : []);
  const limit = ruleSet.costLimit ?? COST_LIMIT;
  for (const p of planOf(ruleSet).byKind[kind] ?? []) {
    const type = p.typeLetThrough(limit);
    if (type === undefined) return "any";
    types.add(type);
  }
  return types;
}

/** The fields some rule of the set guards on (see `evaluateReadsEvent`), by kind. */
export function guardedFields(ruleSet: RuleSet, kind: EventKind): ReadonlySet<string> {
  return new Set((planOf(ruleSet).byKind[kind] ?? []).flatMap((p) => p.guardedFields));
}

/**
 * REQ-12: the run in flight per harness, from opened, closed and loop_stopped rows; and beside it every
 * hook-fed run in flight, several per harness. A hook-fed attempt is a session in flight too, its agent
 * waiting on the answer: an http hook may never deliver the SessionStart, and a stop decided on the
 * attempt must find the run it is to stop.
 */
function trackRuns(row: JournalRow, state: StateView, emit: (op: StateOp) => void): void {
  if (!tracksRuns(row.kind, row.event.type)) return;
  const harness = typeof row.event.harness === "string" ? row.event.harness : undefined;
  const run = typeof row.event.run === "string" ? row.event.run : undefined;
  if (harness === undefined || run === undefined) return;
  if (row.kind === "attempt_event") {
    if (isHookFed(row.event) && !state.session(run)) emit({ op: "session_in_flight", run, harness });
  } else if (row.event.type === "opened") {
    emit({ op: "run_in_flight", harness, run });
    if (isHookFed(row.event) && !state.session(run)) emit({ op: "session_in_flight", run, harness });
  } else if (row.event.type === "closed" || row.event.type === "loop_stopped") {
    if (state.run(harness) === run) emit({ op: "run_in_flight", harness, run: undefined });
    if (state.session(run)) emit({ op: "session_in_flight", run, harness: undefined });
  }
}
