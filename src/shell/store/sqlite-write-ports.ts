/**
 * SQLite's write-path doors (`write-ports.ts`): each call does its synchronous work (one `BEGIN
 * IMMEDIATE` transaction per commit) and answers with it resolved, which costs the event loop nothing
 * measurable (decision 0020). A commit that need not wait for the disk runs under `unsynced`
 * (`wal-sync.ts`).
 */
import type { JournalRow } from "../../core/journal.js";
import type { CoreState } from "../../core/state.js";
import type { AgentRunStops } from "./agent-run-stops.js";
import { settled } from "./async-port.js";
import type { DecisionStore, Decisions } from "./decision-store.js";
import type { DerivedCursors } from "./derived-cursors.js";
import type { JournalCommits } from "./journal-commits.js";
import type { NewRow } from "./journal-table.js";
import type { TokenStore } from "./token-store.js";
import {
  type CommitOptions,
  type DerivedWrite,
  type EvaluatorLog,
  type GroupResult,
  type JournalLog,
  type PendingGroup,
  StopSettledError,
} from "./write-ports.js";

/** Runs a commit without waiting for the disk (`WalSync.unsynced`). */
export type Unsynced = <T>(commit: () => T) => T;

const runCommit = <T>(
  unsynced: Unsynced | undefined,
  options: CommitOptions | undefined,
  commit: () => T,
): T => (options?.unsynced === true && unsynced !== undefined ? unsynced(commit) : commit());

/** The tables derived rows' writes reach (`DerivedWrite`), over the journal's connection. */
export interface DerivedTables {
  readonly cursors: DerivedCursors;
  readonly stops: AgentRunStops;
  readonly tokens: TokenStore;
}

export class SqliteJournalLog implements JournalLog {
  constructor(
    private readonly store: JournalCommits,
    private readonly derived: DerivedTables | undefined,
    private readonly unsynced?: Unsynced,
  ) {}

  last(): Promise<{ readonly seq: number; readonly at: number }> {
    return settled(() => this.store.journal.last());
  }

  answer(source: string, key: string): Promise<string | undefined> {
    return settled(() => this.store.appends.answer(source, key));
  }

  commitGroups(
    groups: readonly PendingGroup[],
    at: number,
    options?: CommitOptions,
  ): Promise<readonly GroupResult[]> {
    const { journal, appends } = this.store;
    return settled(() =>
      runCommit(this.unsynced, options, () =>
        this.store.commit(() => {
          const results = groups.map((g): GroupResult => {
            // A key already stored was committed by an earlier request: its rows are not appended again.
            const stored = g.key === undefined ? undefined : appends.answer(g.key.source, g.key.key);
            if (stored !== undefined) return { kind: "repeated", answer: stored };
            const seqs = g.rows.map((r) => journal.appendAt(r, at));
            if (g.key !== undefined) appends.record(g.key.source, g.key.key, g.key.answer(seqs), at);
            return { kind: "committed", seqs };
          });
          options?.beforeCommit?.();
          return results;
        }),
      ),
    );
  }

  commitRows(
    rows: readonly NewRow[],
    writes: readonly DerivedWrite[] = [],
    options?: CommitOptions,
  ): Promise<readonly number[]> {
    return settled(() =>
      runCommit(this.unsynced, options, () =>
        this.store.commit(() => {
          const seqs = rows.map((r) => this.store.journal.append(r));
          for (const w of writes) this.write(w, seqs);
          options?.beforeCommit?.();
          return seqs;
        }),
      ),
    );
  }

  private write(w: DerivedWrite, seqs: readonly number[]): void {
    const tables = this.derived;
    if (tables === undefined) throw new Error(`journal: no table for a ${w.kind} write here`);
    switch (w.kind) {
      case "cursor":
        tables.cursors.set(w.name, w.seq);
        break;
      case "loop_guard_stop": {
        const loopSeq = seqs[w.row];
        if (loopSeq === undefined)
          throw new Error(`journal: a loop guard stop names row ${w.row} of ${seqs.length}`);
        tables.stops.loopGuardStop({ run: w.run, harness: w.harness, loopSeq, at: w.at });
        break;
      }
      case "stop_closed_first":
        tables.stops.closedFirst(w.run, w.at);
        break;
      case "stop_delivered":
        if (!tables.stops.delivered(w.stop, w.at)) throw new StopSettledError(w.stop.run);
        break;
      case "run_tokens_revoked":
        tables.tokens.revokeGatewayOfRun(w.run, w.at);
        break;
    }
  }
}

export class SqliteEvaluatorLog implements EvaluatorLog {
  constructor(
    private readonly store: JournalCommits,
    private readonly decisions: DecisionStore,
    private readonly unsynced?: Unsynced,
  ) {}

  cursor(): Promise<number> {
    return settled(() => this.decisions.cursor());
  }

  loadState(options: { readonly clearCostExceeded: boolean }): Promise<CoreState> {
    return settled(() => this.decisions.loadState(options));
  }

  commit(decisions: Decisions, options?: CommitOptions): Promise<void> {
    return settled(() => runCommit(this.unsynced, options, () => this.decisions.commit(decisions)));
  }

  rowsAfter(seq: number, limit: number): Promise<readonly JournalRow[]> {
    return settled(() => this.store.journal.rowsAfter(seq, limit));
  }

  async *pagesBetween(afterAt: number, fromSeq: number, toSeq: number): AsyncIterable<readonly JournalRow[]> {
    yield* this.store.journal.pagesBetween(afterAt, fromSeq, toSeq);
  }

  atOf(seq: number): Promise<number | undefined> {
    return settled(() => this.store.journal.atOf(seq));
  }
}
