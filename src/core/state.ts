/**
 * The core's state between rows, as plain data the shell can store and restore, and the delta one row
 * produces. `applyDelta` is the only way state changes: live evaluation and backtest fold the same
 * deltas over the same rows.
 */
import type { EventFields } from "./journal.js";

export interface CooldownEntry {
  /** Journal time (ms) until which the same hash and target do not fire again. */
  readonly until: number;
  /** The fire that set it, for explain. */
  readonly fireId: string;
}

export interface ShadowRecord {
  /** The `at` of the first row after the hash was first loaded. */
  readonly since: number;
  /** Set once the hash has been active: it stays active whenever loaded again. */
  readonly completed: boolean;
}

export interface Hold {
  readonly rule: string;
  readonly hash: string;
  readonly harness: string;
  readonly fireId: string;
  readonly since: number;
  readonly cooldown: number;
  /** The firing event's variables, re-evaluated on every tick. */
  readonly event: EventFields;
  /** Since when the rule has been false on every tick, if it is now. */
  readonly falseSince?: number;
}

export type ReleaseCause = "condition_cleared" | "operator" | "reload";

export interface CoreState {
  readonly cooldowns: Readonly<Record<string, CooldownEntry>>;
  readonly shadows: Readonly<Record<string, ShadowRecord>>;
  /** By `holdKey(harness, rule)`. */
  readonly holds: Readonly<Record<string, Hold>>;
  /** Each harness's run in flight, from opened, closed and loop_stopped rows. */
  readonly runs: Readonly<Record<string, string>>;
  /**
   * Hook-fed runs in flight (`hook-runs.ts`), by run, each with its harness: one harness may have
   * several at once (two Claude Code sessions), so they are tracked per run, beside `runs`.
   */
  readonly sessions: Readonly<Record<string, string>>;
  /** Hashes that overran the runtime cost limit: disabled until the next rule-set load. */
  readonly costExceeded: Readonly<Record<string, true>>;
}

export const emptyState: CoreState = {
  cooldowns: {},
  shadows: {},
  holds: {},
  runs: {},
  sessions: {},
  costExceeded: {},
};

export type StateOp =
  | { readonly op: "shadow_since"; readonly hash: string; readonly since: number }
  | { readonly op: "shadow_completed"; readonly hash: string }
  | { readonly op: "cooldown"; readonly key: string; readonly entry: CooldownEntry }
  | { readonly op: "cooldown_expired"; readonly key: string }
  | { readonly op: "hold"; readonly key: string; readonly hold: Hold }
  | { readonly op: "hold_false_since"; readonly key: string; readonly at: number | undefined }
  | { readonly op: "release"; readonly key: string; readonly cause: ReleaseCause; readonly by?: string }
  | { readonly op: "run_in_flight"; readonly harness: string; readonly run: string | undefined }
  | { readonly op: "session_in_flight"; readonly run: string; readonly harness: string | undefined }
  | { readonly op: "cost_exceeded"; readonly hash: string };

export type StateDelta = readonly StateOp[];

export const holdKey = (harness: string, rule: string): string => `${harness}\u0000${rule}`;
export const cooldownKey = (hash: string, target: string): string => `${hash}\u0000${target}`;

/**
 * One part of the state (its cooldowns, its holds…) as an op sees it: an entry read, set, or removed
 * by setting it to undefined. The accumulator's parts write its own records in place; the view's lay
 * an overlay over a state it must not touch.
 */
interface Part<V> {
  get(key: string): V | undefined;
  set(key: string, value: V | undefined): void;
}

type Parts = { readonly [K in keyof CoreState]: Part<CoreState[K][string]> };

/** What each op does: the one definition, which the accumulator and the view both apply. */
function applyOp(p: Parts, op: StateOp): void {
  switch (op.op) {
    case "shadow_since":
      p.shadows.set(op.hash, { since: op.since, completed: false });
      return;
    case "shadow_completed":
      p.shadows.set(op.hash, { since: p.shadows.get(op.hash)?.since ?? 0, completed: true });
      return;
    case "cooldown":
      p.cooldowns.set(op.key, op.entry);
      return;
    case "cooldown_expired":
      p.cooldowns.set(op.key, undefined);
      return;
    case "hold":
      p.holds.set(op.key, op.hold);
      return;
    case "hold_false_since": {
      const h = p.holds.get(op.key);
      if (h === undefined) return;
      const { falseSince: _, ...rest } = h;
      p.holds.set(op.key, op.at === undefined ? rest : { ...rest, falseSince: op.at });
      return;
    }
    case "release":
      p.holds.set(op.key, undefined);
      return;
    case "run_in_flight":
      p.runs.set(op.harness, op.run);
      return;
    case "session_in_flight":
      p.sessions.set(op.run, op.harness);
      return;
    case "cost_exceeded":
      p.costExceeded.set(op.hash, true);
      return;
    default:
      op satisfies never;
  }
}

/** A part over a record its owner may change: writes go straight into it. */
class RecordPart<V> implements Part<V> {
  constructor(private readonly record: Record<string, V>) {}
  get(key: string): V | undefined {
    return this.record[key];
  }
  set(key: string, value: V | undefined): void {
    if (value === undefined) delete this.record[key];
    else this.record[key] = value;
  }
}

/** A part over a record left as it is: writes go to an overlay made on the first (most rows make none). */
class OverlayPart<V> implements Part<V> {
  // `null` marks an entry removed.
  private edits: Map<string, V | null> | undefined;
  constructor(private readonly base: Readonly<Record<string, V>>) {}
  get(key: string): V | undefined {
    const v = this.edits?.get(key);
    return v === null ? undefined : (v ?? this.base[key]);
  }
  set(key: string, value: V | undefined): void {
    if (this.edits === undefined) this.edits = new Map();
    this.edits.set(key, value ?? null);
  }
  get edited(): boolean {
    return this.edits !== undefined;
  }
  entries(): [string, V][] {
    const keys = new Set([...Object.keys(this.base), ...(this.edits?.keys() ?? [])]);
    const out: [string, V][] = [];
    for (const k of keys) {
      const v = this.get(k);
      if (v !== undefined) out.push([k, v]);
    }
    return out;
  }
}

type MutableState = { -readonly [K in keyof CoreState]: Record<string, CoreState[K][string]> };

/**
 * A state a fold owns and advances row by row without copying it each time. `current` hands out the
 * state itself; the accumulator must not be advanced after a snapshot is shared.
 */
export class StateAccumulator {
  private readonly s: MutableState;
  private readonly parts: Parts;
  constructor(initial: CoreState) {
    // Each record copied once; entries are shared, since no op mutates one.
    this.s = {
      cooldowns: { ...initial.cooldowns },
      shadows: { ...initial.shadows },
      holds: { ...initial.holds },
      runs: { ...initial.runs },
      sessions: { ...initial.sessions },
      costExceeded: { ...initial.costExceeded },
    };
    this.parts = {
      cooldowns: new RecordPart(this.s.cooldowns),
      shadows: new RecordPart(this.s.shadows),
      holds: new RecordPart(this.s.holds),
      runs: new RecordPart(this.s.runs),
      sessions: new RecordPart(this.s.sessions),
      costExceeded: new RecordPart(this.s.costExceeded),
    };
  }
  /** O(ops): the fold's hot path. */
  apply(delta: StateDelta): void {
    for (const op of delta) applyOp(this.parts, op);
  }
  get current(): CoreState {
    return this.s;
  }
}

/** The state after `delta`; `state` itself is left as it was. */
export function applyDelta(state: CoreState, delta: StateDelta): CoreState {
  const acc = new StateAccumulator(state);
  acc.apply(delta);
  return acc.current;
}

/**
 * The state one row's evaluation reads: the state before the row, overlaid with the ops the row has
 * emitted so far, so a later rule of the row sees an earlier rule's cooldown or hold. O(1) per op.
 */
export class StateView {
  // Made on the first op: most rows emit none, and until then every read is the base's own.
  private parts: { readonly [K in keyof CoreState]: OverlayPart<CoreState[K][string]> } | undefined;

  constructor(private readonly base: CoreState) {}

  apply(op: StateOp): void {
    this.parts ??= {
      cooldowns: new OverlayPart(this.base.cooldowns),
      shadows: new OverlayPart(this.base.shadows),
      holds: new OverlayPart(this.base.holds),
      runs: new OverlayPart(this.base.runs),
      sessions: new OverlayPart(this.base.sessions),
      costExceeded: new OverlayPart(this.base.costExceeded),
    };
    applyOp(this.parts, op);
  }

  shadow(hash: string): ShadowRecord | undefined {
    return this.parts === undefined ? this.base.shadows[hash] : this.parts.shadows.get(hash);
  }
  cooldown(key: string): CooldownEntry | undefined {
    return this.parts === undefined ? this.base.cooldowns[key] : this.parts.cooldowns.get(key);
  }
  hold(key: string): Hold | undefined {
    return this.parts === undefined ? this.base.holds[key] : this.parts.holds.get(key);
  }
  holds(): [string, Hold][] {
    return this.parts === undefined ? Object.entries(this.base.holds) : this.parts.holds.entries();
  }
  run(harness: string): string | undefined {
    return this.parts === undefined ? this.base.runs[harness] : this.parts.runs.get(harness);
  }
  /** Whether `run` is a hook-fed run in flight. */
  session(run: string): boolean {
    return (this.parts === undefined ? this.base.sessions[run] : this.parts.sessions.get(run)) !== undefined;
  }
  /** The harness's hook-fed runs in flight, in name order (a stop reaches them in a stable order). */
  sessionsOf(harness: string): string[] {
    const entries =
      this.parts === undefined ? Object.entries(this.base.sessions) : this.parts.sessions.entries();
    return entries
      .filter(([, h]) => h === harness)
      .map(([run]) => run)
      .sort();
  }
  private baseExceeded: boolean | undefined;
  /** Whether any hash is disabled for its cost: almost never, so each rule need not look itself up. */
  anyCostExceeded(): boolean {
    if (this.parts?.costExceeded.edited === true) return true;
    if (this.baseExceeded === undefined) {
      this.baseExceeded = false;
      for (const _ in this.base.costExceeded) {
        this.baseExceeded = true;
        break;
      }
    }
    return this.baseExceeded;
  }
  costExceeded(hash: string): boolean {
    return (
      (this.parts === undefined ? this.base.costExceeded[hash] : this.parts.costExceeded.get(hash)) === true
    );
  }
}
