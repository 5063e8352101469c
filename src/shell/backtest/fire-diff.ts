/**
 * What a changed rule's backtest adds and removes against the loaded version's over the same window,
 * for a reviewer: fires are matched by journal seq and target key, so the same row firing on the same
 * target in both versions is neither added nor removed, whatever its message says.
 */
import type { ReplayedFire } from "../../core/backtest.js";

export interface FireDiff {
  /** Fires of the new version with no fire of the loaded version at the same seq and target. */
  readonly added: readonly ReplayedFire[];
  /** Fires of the loaded version with no fire of the new version at the same seq and target. */
  readonly removed: readonly ReplayedFire[];
}

/** A fire's identity across versions: its row and its target. */
export const fireKey = (f: ReplayedFire): string =>
  `${f.seq}\u0000${f.target === undefined ? "" : `${f.target.kind}\u0000${f.target.key}`}`;

export function diffFires(loaded: readonly ReplayedFire[], next: readonly ReplayedFire[]): FireDiff {
  const loadedKeys = new Set(loaded.map(fireKey));
  const nextKeys = new Set(next.map(fireKey));
  return {
    added: next.filter((f) => !loadedKeys.has(fireKey(f))),
    removed: loaded.filter((f) => !nextKeys.has(fireKey(f))),
  };
}
