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
  | { readonly op: "hold"; readonly key: string; readonly hold: Hold }
  | { readonly op: "hold_false_since"; readonly key: string; readonly at: number | undefined }
  | { readonly op: "release"; readonly key: string; readonly cause: ReleaseCause }
  | { readonly op: "run_in_flight"; readonly harness: string; readonly run: string | undefined }
  | { readonly op: "cost_exceeded"; readonly hash: string };

export type StateDelta = readonly StateOp[];

export const holdKey = (harness: string, rule: string): string => `${harness}\u0000${rule}`;
export const cooldownKey = (hash: string, target: string): string => `${hash}\u0000${target}`;

function without<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
  const { [key]: _, ...rest } = record;
  return rest;
}

export function applyDelta(state: CoreState, delta: StateDelta): CoreState {
  let s = state;
  for (const op of delta) {
    switch (op.op) {
      case "shadow_since":
        s = { ...s, shadows: { ...s.shadows, [op.hash]: { since: op.since, completed: false } } };
        break;
      case "shadow_completed": {
        const r = s.shadows[op.hash];
        s = { ...s, shadows: { ...s.shadows, [op.hash]: { since: r?.since ?? 0, completed: true } } };
        break;
      }
      case "cooldown":
        s = { ...s, cooldowns: { ...s.cooldowns, [op.key]: op.entry } };
        break;
      case "hold":
        s = { ...s, holds: { ...s.holds, [op.key]: op.hold } };
        break;
      case "hold_false_since": {
        const h = s.holds[op.key];
        if (h === undefined) break;
        const { falseSince: _, ...rest } = h;
        s = {
          ...s,
          holds: { ...s.holds, [op.key]: op.at === undefined ? rest : { ...rest, falseSince: op.at } },
        };
        break;
      }
      case "release":
        s = { ...s, holds: without(s.holds, op.key) };
        break;
      case "run_in_flight":
        s = {
          ...s,
          runs: op.run === undefined ? without(s.runs, op.harness) : { ...s.runs, [op.harness]: op.run },
        };
        break;
      case "cost_exceeded":
        s = { ...s, costExceeded: { ...s.costExceeded, [op.hash]: true } };
        break;
    }
  }
  return s;
}
