/**
 * Daemon-derived rows: journal rows the daemon writes itself, derived from rows already committed (the
 * loop guard's `loop_stopped`, the stale run closer's `closed`, the file-edge projector's graph events)
 * or from a hook call (a delivered stop's `closed`). All go through one path, `AppendDerived`: outside
 * the producers' drop-on-full queue, in one transaction with whatever they go with (a producer's cursor,
 * a stop recorded), so a crash neither loses nor repeats one.
 */
import type { EventFields, JournalRow } from "../../core/journal.js";
import type { EventKind } from "../../core/kinds.js";
import type { Source } from "../../core/sources.js";
import type { DerivedWrite } from "../store/write-ports.js";

export interface DerivedRow {
  readonly source: Source;
  readonly kind: EventKind;
  readonly event: EventFields;
}

/**
 * Commits `rows` now, with `writes` in the same transaction; resolves with the rows' seqs. Rejects
 * when the commit fails, and then nothing of it is in the store.
 */
export type AppendDerived = (
  rows: readonly DerivedRow[],
  writes?: readonly DerivedWrite[],
  /**
   * `unsynced`: the commit need not wait for the disk (cursors of rows that derived nothing); `fenced`:
   * only while this daemon leads (the derivers' own commits, decision 0022).
   */
  options?: { readonly unsynced?: boolean; readonly fenced?: boolean },
) => Promise<readonly number[]>;

/** What one committed row gives a deriver to write. */
export interface Derived {
  readonly rows: readonly DerivedRow[];
  /** Store writes that commit with the rows (a loop guard's stop: its `row` indexes these rows). */
  readonly writes?: readonly DerivedWrite[];
  /**
   * Told the rows' seqs once their transaction has committed (the decision export); never for a commit
   * that failed, whose rows are derived again.
   */
  readonly committed?: (seqs: readonly number[]) => void;
}

/**
 * A producer of derived rows: a fold over committed journal rows in seq order. Its state must be a
 * function of the rows alone, so that replaying the journal up to its cursor rebuilds it (at start, and
 * after a failed commit); what it derived during a replay is already in the journal and is dropped.
 */
export interface Deriver {
  /** Its cursor's key in the store. */
  readonly name: string;
  /** The kinds of row it reads; the rest pass it by. */
  readonly kinds: readonly EventKind[];
  /** Forgets all state, before a replay rebuilds it. */
  reset(): void;
  /**
   * Folds one row into its state and returns what it derives from it, if anything. `replay`: the row is
   * read again to rebuild the state, and what it returns is dropped (it is in the journal already, or,
   * for a deriver whose output depends on config, will be derived again from the next live row).
   */
  derive(row: JournalRow, replay: boolean): Derived | undefined;
  /**
   * Whether what it derives is written; when off (a config turned it off) it still folds every row, so
   * it is in step when turned on again, but writes nothing for the rows it read while off.
   */
  readonly enabled: () => boolean;
}
