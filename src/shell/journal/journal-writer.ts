/**
 * Admission (SPEC-0029 REQ-7): producers offer rows to a bounded in-memory queue and never wait; a full
 * queue drops the row and counts it per source, so a dropped row is dropped for everyone, live and
 * backtest alike. The writer drains the queue in batches, stamping each batch with the admission clock,
 * made non-decreasing in seq order even when the wall clock steps back, and commits each batch in one
 * `BEGIN IMMEDIATE` transaction.
 */
import type { EventFields } from "../../core/journal.js";
import type { EventKind } from "../../core/kinds.js";
import type { Source } from "../../core/sources.js";
import type { JournalTable } from "../store/journal-table.js";
import type { Db } from "../store/open-store.js";
import { failpoint } from "../support/failpoints.js";
import type { DaemonMetrics } from "../support/metrics.js";

export interface Offer {
  readonly source: Source;
  readonly kind: EventKind;
  readonly event: EventFields;
}

export type OfferResult =
  | { readonly kind: "queued"; readonly seq: Promise<number> }
  | { readonly kind: "dropped" };

export interface JournalWriterOptions {
  /** Rows the queue holds before it drops; bounds the memory producers can make the daemon hold. */
  readonly queueLimit: number;
  readonly batchSize: number;
  /** The daemon's wall clock, ms. */
  readonly clock: () => number;
  readonly metrics: DaemonMetrics;
  /** Called after each committed batch with its last seq. */
  readonly onCommitted: (lastSeq: number) => void;
  readonly onError: (error: Error) => void;
}

interface Queued {
  readonly offer: Offer;
  resolve(seq: number): void;
  reject(e: Error): void;
}

export const DEFAULT_QUEUE_LIMIT = 10_000;
export const DEFAULT_BATCH_SIZE = 1_000;

export class JournalWriter {
  private queue: Queued[] = [];
  private scheduled = false;
  private closed = false;
  private lastAt: number;

  constructor(
    private readonly db: Db,
    private readonly journal: JournalTable,
    private readonly options: JournalWriterOptions,
  ) {
    this.lastAt = journal.last().at;
  }

  /** Offers one row; returns at once. */
  offer(offer: Offer): OfferResult {
    if (this.closed || this.queue.length >= this.options.queueLimit) {
      this.options.metrics.journalDropped.inc({ source: offer.source });
      return { kind: "dropped" };
    }
    let entry: Queued | undefined;
    const seq = new Promise<number>((resolve, reject) => {
      entry = { offer, resolve, reject };
    });
    // A caller that does not wait for the seq (the ticker) must not turn a failed batch into a crash.
    seq.catch(() => {});
    this.queue.push(entry as Queued);
    this.schedule();
    return { kind: "queued", seq };
  }

  get queued(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.closed) this.flush();
    });
  }

  /** Commits what is queued and stops: later offers are dropped (the daemon is shutting down). */
  close(): void {
    while (this.queue.length > 0 && !this.closed) {
      const before = this.queue.length;
      this.flush();
      if (this.queue.length >= before) break;
    }
    this.closed = true;
  }

  /** Commits up to one batch; schedules itself again while rows remain, so producers get a turn. */
  flush(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.options.batchSize);
    const at = Math.max(this.lastAt, this.options.clock());
    const seqs: number[] = [];
    try {
      this.db
        .transaction(() => {
          for (const q of batch)
            seqs.push(
              this.journal.append({ kind: q.offer.kind, source: q.offer.source, at, event: q.offer.event }),
            );
          failpoint("admit.beforeCommit");
        })
        .immediate();
    } catch (e) {
      const error = new Error(
        `journal: a batch of ${batch.length} rows was not admitted: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
      for (const q of batch) q.reject(error);
      this.options.onError(error);
      if (this.queue.length > 0) this.schedule();
      return;
    }
    failpoint("admit.afterCommit");
    this.lastAt = at;
    batch.forEach((q, i) => {
      this.options.metrics.journalRows.inc({ source: q.offer.source });
      q.resolve(seqs[i] as number);
    });
    this.options.onCommitted(seqs[seqs.length - 1] as number);
    if (this.queue.length > 0) this.schedule();
  }
}
