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
  /** Hashes that overran the runtime cost limit: disabled until the next rule-set load. */
  readonly costExceeded: Readonly<Record<string, true>>;
}

export const emptyState: CoreState = { cooldowns: {}, shadows: {}, holds: {}, runs: {}, costExceeded: {} };

export type StateOp =
  | { readonly op: "shadow_since"; readonly hash: string; readonly since: number }
  | { readonly op: "shadow_completed"; readonly hash: string }
  | { readonly op: "cooldown"; readonly key: string; readonly entry: CooldownEntry }
  | { readonly op: "cooldown_expired"; readonly key: string }
  | { readonly op: "hold"; readonly key: string; readonly hold: Hold }
  | { readonly op: "hold_false_since"; readonly key: string; readonly at: number | undefined }
  | { readonly op: "release"; readonly key: string; readonly cause: ReleaseCause }
  | { readonly op: "run_in_flight"; readonly harness: string; readonly run: string | undefined }
  | { readonly op: "cost_exceeded"; readonly hash: string };

export type StateDelta = readonly StateOp[];

export const holdKey = (harness: string, rule: string): string => `${harness}\u0000${rule}`;
export const cooldownKey = (hash: string, target: string): string => `${hash}\u0000${target}`;

/** A deep-enough copy to mutate: each record copied once, entries shared (they are never mutated). */
function cloneState(state: CoreState): MutableState {
  return {
    cooldowns: { ...state.cooldowns },
    shadows: { ...state.shadows },
    holds: { ...state.holds },
    runs: { ...state.runs },
    costExceeded: { ...state.costExceeded },
  };
}

type MutableState = { -readonly [K in keyof CoreState]: Record<string, CoreState[K][string]> };

/** Applies ops to a state this caller owns. O(ops): the fold's hot path. */
function applyInPlace(s: MutableState, delta: StateDelta): void {
  for (const op of delta) {
    switch (op.op) {
      case "shadow_since":
        s.shadows[op.hash] = { since: op.since, completed: false };
        break;
      case "shadow_completed":
        s.shadows[op.hash] = { since: s.shadows[op.hash]?.since ?? 0, completed: true };
        break;
      case "cooldown":
        s.cooldowns[op.key] = op.entry;
        break;
      case "cooldown_expired":
        delete s.cooldowns[op.key];
        break;
      case "hold":
        s.holds[op.key] = op.hold;
        break;
      case "hold_false_since": {
        const h = s.holds[op.key];
        if (h === undefined) break;
        const { falseSince: _, ...rest } = h;
        s.holds[op.key] = op.at === undefined ? rest : { ...rest, falseSince: op.at };
        break;
      }
      case "release":
        delete s.holds[op.key];
        break;
      case "run_in_flight":
        if (op.run === undefined) delete s.runs[op.harness];
        else s.runs[op.harness] = op.run;
        break;
      case "cost_exceeded":
        s.costExceeded[op.hash] = true;
        break;
    }
  }
}

/** The state after `delta`; `state` itself is left as it was. */
export function applyDelta(state: CoreState, delta: StateDelta): CoreState {
  const s = cloneState(state);
  applyInPlace(s, delta);
  return s;
}

/**
 * A state a fold owns and advances row by row without copying it each time. `snapshot` hands out the
 * current state; the accumulator must not be advanced after a snapshot is shared.
 */
export class StateAccumulator {
  private readonly s: MutableState;
  constructor(initial: CoreState) {
    this.s = cloneState(initial);
  }
  apply(delta: StateDelta): void {
    applyInPlace(this.s, delta);
  }
  get current(): CoreState {
    return this.s;
  }
}

/**
 * The state one row's evaluation reads: the state before the row, overlaid with the ops the row has
 * emitted so far, so a later rule of the row sees an earlier rule's cooldown or hold. O(1) per op.
 */
export class StateView {
  // One overlay per record, made on the first op (most rows emit none); `null` marks an entry removed.
  private shadows: Map<string, ShadowRecord> | undefined;
  private cooldowns: Map<string, CooldownEntry | null> | undefined;
  private holdsOverlay: Map<string, Hold | null> | undefined;
  private runs: Map<string, string | null> | undefined;
  private exceeded: Set<string> | undefined;

  constructor(private readonly base: CoreState) {}

  apply(op: StateOp): void {
    switch (op.op) {
      case "shadow_since":
        this.shadows = (this.shadows ?? new Map()).set(op.hash, { since: op.since, completed: false });
        break;
      case "shadow_completed":
        this.shadows = (this.shadows ?? new Map()).set(op.hash, {
          since: this.shadow(op.hash)?.since ?? 0,
          completed: true,
        });
        break;
      case "cooldown":
        this.cooldowns = (this.cooldowns ?? new Map()).set(op.key, op.entry);
        break;
      case "cooldown_expired":
        this.cooldowns = (this.cooldowns ?? new Map()).set(op.key, null);
        break;
      case "hold":
        this.holdsOverlay = (this.holdsOverlay ?? new Map()).set(op.key, op.hold);
        break;
      case "hold_false_since": {
        const h = this.hold(op.key);
        if (h === undefined) break;
        const { falseSince: _, ...rest } = h;
        this.holdsOverlay = (this.holdsOverlay ?? new Map()).set(
          op.key,
          op.at === undefined ? rest : { ...rest, falseSince: op.at },
        );
        break;
      }
      case "release":
        this.holdsOverlay = (this.holdsOverlay ?? new Map()).set(op.key, null);
        break;
      case "run_in_flight":
        this.runs = (this.runs ?? new Map()).set(op.harness, op.run ?? null);
        break;
      case "cost_exceeded":
        this.exceeded = (this.exceeded ?? new Set()).add(op.hash);
        break;
    }
  }

  shadow(hash: string): ShadowRecord | undefined {
    return this.shadows?.get(hash) ?? this.base.shadows[hash];
  }
  cooldown(key: string): CooldownEntry | undefined {
    const v = this.cooldowns?.get(key);
    return v === null ? undefined : (v ?? this.base.cooldowns[key]);
  }
  hold(key: string): Hold | undefined {
    const v = this.holdsOverlay?.get(key);
    return v === null ? undefined : (v ?? this.base.holds[key]);
  }
  holds(): [string, Hold][] {
    const keys = new Set([...Object.keys(this.base.holds), ...(this.holdsOverlay?.keys() ?? [])]);
    const out: [string, Hold][] = [];
    for (const k of keys) {
      const h = this.hold(k);
      if (h !== undefined) out.push([k, h]);
    }
    return out;
  }
  run(harness: string): string | undefined {
    const v = this.runs?.get(harness);
    return v === null ? undefined : (v ?? this.base.runs[harness]);
  }
  private baseExceeded: boolean | undefined;
  /** Whether any hash is disabled for its cost: almost never, so each rule need not look itself up. */
  anyCostExceeded(): boolean {
    if (this.exceeded !== undefined) return true;
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
    return this.exceeded?.has(hash) === true || this.base.costExceeded[hash] === true;
  }
}
