/**
 * Folding `evaluate` over rows: the live evaluator does it one committed row at a time, and backtest
 * (SPEC-0029 REQ-8) does it over a stretch of the journal through one rule, starting with no cooldowns
 * and no holds, its windows looking back into older rows. Same function, same rows, same fires.
 */
import { evaluate, evaluateReadsEvent, guardedFields, typesRead } from "./evaluate.js";
import type { JournalRow } from "./journal.js";
import type { EventKind } from "./kinds.js";
import type { Fire, HoldAction, RowOutcome } from "./outcome.js";
import type { Level } from "./rule-file.js";
import { type ActiveRule, type RuleSet, ruleSetOf } from "./rule-set.js";
import { type CoreState, emptyState, holdKey, StateAccumulator } from "./state.js";
import type { WindowReader } from "./window.js";

/** The window reader bound to one row: rows with seq at most its seq, `now` its `at`. */
export type WindowFor = (row: JournalRow) => WindowReader;

export interface FoldResult {
  readonly state: CoreState;
  readonly outcomes: readonly RowOutcome[];
}

export function fold(
  ruleSet: RuleSet,
  rows: readonly JournalRow[],
  state: CoreState,
  windowFor: WindowFor,
): FoldResult {
  const acc = new StateAccumulator(state);
  const outcomes: RowOutcome[] = [];
  for (const row of rows) {
    const outcome = evaluate(ruleSet, row, acc.current, windowFor(row));
    acc.apply(outcome.delta);
    outcomes.push(outcome);
  }
  return { state: acc.current, outcomes };
}

/** A simulated hold: placed by its fire's row, ended by the tick that released it. */
export interface HoldSpan {
  readonly harness: string;
  /** The releasing row; undefined while the hold is still in force at the end of the stretch. */
  readonly until?: { readonly seq: number; readonly at: number };
}

export interface BacktestFire {
  readonly fire: Fire;
  /** For a fire whose actions place a hold: the span it would have held. */
  readonly hold?: HoldSpan;
}

export interface BacktestCounts {
  /** Rows replayed, whatever their kind. */
  readonly rows: number;
  /** Rows whose kind is the rule's `on`: the rule was evaluated on each. */
  readonly evaluations: number;
  readonly evalErrors: number;
  readonly storeErrors: number;
  /** Matches inside a cooldown (REQ-13). */
  readonly suppressed: number;
  /** Evaluations over the runtime cost limit; after the first the rule is disabled, as live. */
  readonly costExceeded: number;
  readonly fires: number;
}

export interface BacktestOptions {
  readonly shadowPeriod: number;
  /** The live shadow records, so modes match the live fire log. */
  readonly shadows?: CoreState["shadows"];
  readonly costLimit?: number;
}

/**
 * Backtest (SPEC-0029 REQ-8) as a fold the caller drives one row at a time, so a month of journal
 * streams through it: it starts with no cooldowns and no holds, keeps only the state `evaluate` needs,
 * and hands back each fire once it is complete, in seq order. A fire that places a hold is complete
 * when the hold ends, so it waits, and the fires after it wait with it, until then or `finish`.
 */
/** A hold span while the fold still owns it: its end is filled in by the release. */
type OpenSpan = { harness: string; until?: { seq: number; at: number } };

export class BacktestFold {
  private readonly ruleSet: RuleSet;
  private readonly acc: StateAccumulator;
  private readonly waiting: { fire: Fire; hold?: OpenSpan }[] = [];
  private readonly openHolds = new Map<string, OpenSpan>();
  private readonly counts = {
    rows: 0,
    evaluations: 0,
    evalErrors: 0,
    storeErrors: 0,
    suppressed: 0,
    costExceeded: 0,
    fires: 0,
  };

  constructor(rule: ActiveRule, options: BacktestOptions) {
    this.ruleSet = ruleSetOf({
      rules: [rule],
      disabled: [],
      shadowPeriod: options.shadowPeriod,
      unknownEnforced: [],
      stalePins: [],
      pinned: [],
      ...(options.costLimit === undefined ? {} : { costLimit: options.costLimit }),
    });
    this.acc = new StateAccumulator({ ...emptyState, shadows: options.shadows ?? {} });
  }

  /**
   * Whether evaluating a row of this kind and type reads its event beyond the type and the fields
   * `known` gives (`evaluateReadsEvent`).
   */
  readsEvent(
    kind: EventKind,
    type: string,
    known?: (field: string) => string | boolean | undefined,
  ): boolean {
    return evaluateReadsEvent(this.ruleSet, kind, type, known);
  }

  /** The event types of this kind whose rows `readsEvent` may answer true for (`typesRead`). */
  typesRead(kind: EventKind): ReadonlySet<string> | "any" {
    return typesRead(this.ruleSet, kind);
  }

  /** The fields the rule's guards test on rows of this kind: worth knowing before a row is decoded. */
  guardedFields(kind: EventKind): ReadonlySet<string> {
    return guardedFields(this.ruleSet, kind);
  }

  /** Evaluates the next row (seq order; `window` bound to it); returns the fires now complete. */
  step(row: JournalRow, window: WindowReader): BacktestFire[] {
    const outcome = evaluate(this.ruleSet, row, this.acc.current, window);
    this.acc.apply(outcome.delta);
    const c = this.counts;
    c.rows++;
    for (const e of outcome.evaluations) {
      c.evaluations++;
      if (e.result === "eval_error") c.evalErrors++;
      else if (e.result === "store_error") c.storeErrors++;
      else if (e.result === "suppressed") c.suppressed++;
      else if (e.result === "cost_exceeded") c.costExceeded++;
    }
    c.fires += outcome.fires.length;
    // Spans come from the plans themselves: the hold a fire places, and the release that ends it.
    for (const fire of outcome.fires) {
      const placed = fire.actions.find((a): a is HoldAction => a.kind === "hold");
      if (placed === undefined) {
        this.waiting.push({ fire });
        continue;
      }
      const span = { harness: placed.harness };
      this.openHolds.set(holdKey(placed.harness, fire.rule), span);
      this.waiting.push({ fire, hold: span });
    }
    for (const release of outcome.releases) {
      const key = holdKey(release.harness, release.rule);
      const span = this.openHolds.get(key);
      if (span !== undefined) span.until = { seq: row.seq, at: row.at };
      this.openHolds.delete(key);
    }
    return this.drain(false);
  }

  /** The fires still waiting on a hold, and the counts of the whole replay. */
  finish(): { readonly fires: readonly BacktestFire[]; readonly counts: BacktestCounts } {
    return { fires: this.drain(true), counts: { ...this.counts } };
  }

  private drain(all: boolean): BacktestFire[] {
    let n = 0;
    while (n < this.waiting.length) {
      const w = this.waiting[n] as (typeof this.waiting)[number];
      if (!all && w.hold !== undefined && w.hold.until === undefined) break;
      n++;
    }
    return n === 0 ? [] : this.waiting.splice(0, n);
  }
}

export interface BacktestResult {
  readonly fires: readonly BacktestFire[];
  readonly counts: BacktestCounts;
}

/** A whole backtest over rows in memory: `BacktestFold` driven to the end. */
export function backtest(
  rule: ActiveRule,
  rows: Iterable<JournalRow>,
  windowFor: WindowFor,
  options: BacktestOptions,
): BacktestResult {
  const bt = new BacktestFold(rule, options);
  const fires: BacktestFire[] = [];
  for (const row of rows) fires.push(...bt.step(row, windowFor(row)));
  const end = bt.finish();
  fires.push(...end.fires);
  return { fires, counts: end.counts };
}

export interface ReplayedFire {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly type: string;
  readonly target?: { readonly kind: string; readonly key: string };
  readonly declaredLevel: Level;
  readonly level: Level;
  readonly mode: "shadow" | "active";
  readonly message: string;
  /** For a fire that holds: until which row (absent while still held at the end). */
  readonly hold?: { readonly until?: { readonly seq: number; readonly at: number } };
}

/** A backtest fire as a replay reports it: flat, and ready for the wire. */
export function replayedFire({ fire, hold }: BacktestFire): ReplayedFire {
  return {
    seq: fire.seq,
    at: fire.at,
    kind: fire.kind,
    type: fire.type,
    ...(fire.target === undefined ? {} : { target: { kind: fire.target.kind, key: fire.target.key } }),
    declaredLevel: fire.declaredLevel,
    level: fire.effectiveLevel,
    mode: fire.mode,
    message: fire.message,
    ...(hold === undefined ? {} : { hold: hold.until === undefined ? {} : { until: hold.until } }),
  };
}
