/**
 * Runs the derivers (`deriver.ts`) over committed journal rows: each from its own cursor, in seq order,
 * committing what it derived from a stretch of rows with its cursor in one transaction. At start each
 * deriver's state is rebuilt by replaying the journal up to its cursor, from where `replayFrom` says the
 * oldest state still needed begins (the derivers' state is about runs in flight). A deriver with no cursor yet
 * (new in this version) starts at the journal's end, with its state rebuilt from the rows before: what
 * it would have derived from older rows is history, not news. That cursor is stored at once, before
 * anything is admitted, so a crash before its first derivation cannot make it skip a row.
 *
 * A stretch of rows that derived nothing does not commit on its own: the cursors wait for the next
 * derivation, or for `saveCursors` (the daemon calls it a moment after). A crash before then replays
 * those rows at the restart, and, the derivers' state being a function of the rows, they again derive
 * nothing. That keeps a commit (an fsync on the event loop) off every row that derives nothing.
 */
import type { JournalRow } from "../../core/journal.js";
import type { StoreDoor } from "../store/store-door.js";
import type { DerivedWrite } from "../store/write-ports.js";
import type { AppendDerived, DerivedRow, Deriver } from "./deriver.js";

export interface DerivationDeps {
  readonly journal: StoreDoor["journal"];
  readonly cursors: StoreDoor["cursors"];
  readonly append: AppendDerived;
  readonly derivers: readonly Deriver[];
  /**
   * The first seq a rebuild replays from: what the derivers keep is about runs in flight, so the rows
   * before the oldest of them matter no longer. Unset: the whole journal.
   */
  readonly replayFrom?: () => Promise<number>;
}

/** Rows read per commit: what a deriver derived from them commits with its cursor after them. */
const BATCH = 256;

export class Derivation {
  /** Each deriver's last row read; past its stored cursor while `unsaved`. */
  private readonly cursor = new Map<string, number>();
  private unsaved = false;
  private built = false;

  constructor(private readonly deps: DerivationDeps) {}

  /**
   * At start, before anything is admitted: stores the cursor of each deriver that has none, and rebuilds
   * every deriver's state.
   */
  async start(): Promise<void> {
    const { journal, cursors, derivers } = this.deps;
    const head = (await journal.last()).seq;
    const fresh: Deriver[] = [];
    for (const d of derivers) if ((await cursors.get(d.name)) === undefined) fresh.push(d);
    if (fresh.length > 0)
      await this.deps.append(
        [],
        fresh.map((d) => ({ kind: "cursor", name: d.name, seq: head })),
      );
    await this.rebuild();
  }

  /** Rebuilds every deriver's state from the journal up to its cursor. */
  private async rebuild(): Promise<void> {
    const { journal, cursors, derivers } = this.deps;
    this.cursor.clear();
    this.unsaved = false;
    let upTo = 0;
    for (const d of derivers) {
      d.reset();
      const c = (await cursors.get(d.name)) ?? (await journal.last()).seq;
      this.cursor.set(d.name, c);
      upTo = Math.max(upTo, c);
    }
    if (upTo > 0)
      for await (const row of journal.rowsInRange(Math.max(1, (await this.deps.replayFrom?.()) ?? 1), upTo))
        for (const d of derivers)
          if (row.seq <= (this.cursor.get(d.name) as number) && d.kinds.includes(row.kind))
            d.derive(row, true);
    this.built = true;
  }

  /**
   * Derives from the rows committed after each deriver's cursor, a batch per deriver, and commits what
   * they all derived with their cursors in one transaction (one commit a step, not one per deriver);
   * resolves with the number of rows read, so the caller can come back while there are more. Rejects
   * when the commit fails, after marking the states for a rebuild (nothing uncommitted is kept).
   */
  async step(): Promise<number> {
    if (!this.built) await this.rebuild();
    const out: DerivedRow[] = [];
    const writes: DerivedWrite[] = [];
    const committed: ((seqs: readonly number[]) => void)[] = [];
    const advanced = new Map<string, number>();
    let read = 0;
    // Derivers at one cursor (the usual case) share one read: nothing commits until the step ends.
    const readAt = new Map<number, readonly JournalRow[]>();
    for (const d of this.deps.derivers) {
      const from = this.cursor.get(d.name) as number;
      const rows = readAt.get(from) ?? (await this.deps.journal.rowsAfter(from, BATCH));
      readAt.set(from, rows);
      if (rows.length === 0) continue;
      read += rows.length;
      const on = d.enabled();
      for (const row of rows as JournalRow[]) {
        if (!d.kinds.includes(row.kind)) continue;
        const derived = d.derive(row, false);
        if (derived === undefined || !on) continue;
        const start = out.length;
        out.push(...derived.rows);
        const n = derived.rows.length;
        // A write's `row` indexes the deriver's own rows: here, the step's.
        for (const w of derived.writes ?? [])
          writes.push(w.kind === "loop_guard_stop" ? { ...w, row: w.row + start } : w);
        const tell = derived.committed;
        if (tell !== undefined) committed.push((seqs) => tell(seqs.slice(start, start + n)));
      }
      advanced.set(d.name, (rows.at(-1) as JournalRow).seq);
    }
    if (advanced.size === 0) return 0;
    for (const [name, cursor] of advanced) this.cursor.set(name, cursor);
    if (out.length === 0 && writes.length === 0) this.unsaved = true;
    else {
      const seqs = await this.commit(out, writes);
      for (const tell of committed) tell(seqs);
    }
    return read;
  }

  /** Whether rows were read that derived nothing and whose cursors are not yet stored. */
  get cursorsUnsaved(): boolean {
    return this.unsaved;
  }

  /**
   * Stores the cursors of rows that derived nothing, without waiting for the disk (a power cut makes
   * those rows read again, to the same nothing); rejects when the commit fails.
   */
  async saveCursors(): Promise<void> {
    if (this.unsaved) await this.commit([], [], { unsynced: true });
  }

  /** Commits `out` and `writes` with every deriver's cursor; returns the seqs of `out`. */
  private async commit(
    out: readonly DerivedRow[],
    writes: readonly DerivedWrite[],
    options?: { readonly unsynced?: boolean },
  ): Promise<readonly number[]> {
    let seqs: readonly number[];
    const cursors = [...this.cursor].map(([name, seq]): DerivedWrite => ({ kind: "cursor", name, seq }));
    try {
      seqs = await this.deps.append(out, [...writes, ...cursors], options);
    } catch (e) {
      // The states have folded rows whose derivations did not commit: rebuild from the store next step.
      this.built = false;
      throw new Error(`deriving rows: the commit failed: ${(e as Error).message}`, { cause: e });
    }
    this.unsaved = false;
    return seqs;
  }
}
