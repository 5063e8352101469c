/**
 * Admission (SPEC-0029 REQ-7): producers offer rows to a bounded in-memory queue and never wait; a full
 * queue drops the row and counts it per source, so a dropped row is dropped for everyone, live and
 * backtest alike. The queue is shared fairly: the rows of one harness (a row's `harness`, else its
 * source) may fill at most a share of it (`SHARE_DIVISOR`), so one flooding agent leaves room for the
 * others' rows; a harness at its full share has its rows dropped, counted per source apart too. The
 * writer drains the queue in batches, stamping each batch with the admission clock, made non-decreasing
 * in seq order even when the wall clock steps back, and commits each batch in one `BEGIN IMMEDIATE`
 * transaction. A group of rows offered with an idempotency key (one Append request's)
 * is never split across batches, and its key commits in the transaction that commits its rows. A batch
 * of groups offered `unsynced` (answered at their commit, not after the disk's fsync) commits without
 * waiting for the disk (`../store/wal-sync.ts`). Rows another journal admitted (`journal import`) are
 * committed by the same clock, keeping the admission times they carry where those do not decrease.
 * The store is reached through its asynchronous door (`JournalLog`, decision 0020); commits run one at a
 * time, in the order they were asked for, so the clock's stamps stay in seq order whatever the store.
 */
import type { EventFields } from "../../core/journal.js";
import type { EventKind } from "../../core/kinds.js";
import type { Source } from "../../core/sources.js";
import type { NewRow } from "../store/journal-table.js";
import type { DerivedWrite, GroupKey, GroupResult, JournalLog } from "../store/write-ports.js";
import { failpoint } from "../support/failpoints.js";
import type { DaemonMetrics } from "../support/metrics.js";

export interface Offer {
  readonly source: Source;
  readonly kind: EventKind;
  readonly event: EventFields;
  /** The client certificate it came under, over mutual TLS: stored beside the row, not in its event. */
  readonly peer?: NewRow["peer"];
}

/** A row from another journal, with the time it was admitted at there when it carries one. */
export interface ImportedOffer extends Offer {
  readonly admittedAt?: number;
}

/** What became of an imported row: committed, or refused for a time earlier than the row before it's. */
export type ImportResult =
  | { readonly kind: "committed"; readonly seq: number }
  | { readonly kind: "refused" };

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
  readonly offers: readonly Offer[];
  readonly key: GroupKey | undefined;
  readonly unsynced: boolean;
  resolve(r: GroupResult): void;
  reject(e: Error): void;
}

export const DEFAULT_QUEUE_LIMIT = 10_000;
export const DEFAULT_BATCH_SIZE = 1_000;
/** One harness may hold 1/4 of the queue: three flooding together still leave a quarter to the rest. */
export const SHARE_DIVISOR = 4;

/** Whose share of the queue a row takes: its harness's, or its source's when it names none. */
export const tenantOf = (o: Offer): string =>
  typeof o.event.harness === "string" ? `harness:${o.event.harness}` : `source:${o.source}`;

export class JournalWriter {
  private queue: Queued[] = [];
  /** Rows in the queue: a group counts each of its rows. */
  private rows = 0;
  /** Rows in the queue by tenant (`tenantOf`); a tenant with none has no entry. */
  private readonly byTenant = new Map<string, number>();
  private scheduled = false;
  private flushing = false;
  private closed = false;
  /** The commits asked for, run one after another. */
  private commits: Promise<unknown> = Promise.resolve();

  /** The last commit's admission time; read from the journal's last row before the first commit. */
  private lastAt: number | undefined;

  constructor(
    private readonly log: JournalLog,
    private readonly options: JournalWriterOptions,
  ) {}

  /** Runs `commit` after the commits asked for before it, whatever became of them. */
  private serially<T>(commit: () => Promise<T>): Promise<T> {
    const next = this.commits.then(commit);
    this.commits = next.catch(() => undefined);
    return next;
  }

  /** Offers one row; returns at once. */
  offer(offer: Offer): OfferResult {
    const { result } = this.offerGroup([offer], undefined);
    if (result === undefined) return { kind: "dropped" };
    // Only a group with a key can be answered "repeated".
    const seq = result.then((r) => (r as Extract<GroupResult, { kind: "committed" }>).seqs[0] as number);
    // A caller that does not wait for the seq (the ticker) must not turn a failed batch into a crash.
    seq.catch(() => {});
    return { kind: "queued", seq };
  }

  /**
   * Offers rows as one group, committed together with `key`; returns at once. The queue takes the first
   * rows it has room for and drops the rest, as it would offered one by one: `queued` says how many.
   * `unsynced`: the commit need not wait for the disk (`../store/wal-sync.ts`).
   */
  offerGroup(
    offers: readonly Offer[],
    key: GroupKey | undefined,
    unsynced = false,
  ): { readonly queued: number; readonly result: Promise<GroupResult> | undefined } {
    const taken = this.take(offers);
    for (const o of offers.slice(taken.length)) this.options.metrics.journalDropped.inc({ source: o.source });
    if (taken.length === 0) return { queued: 0, result: undefined };
    let entry: Queued | undefined;
    const result = new Promise<GroupResult>((resolve, reject) => {
      entry = { offers: taken, key, unsynced, resolve, reject };
    });
    this.queue.push(entry as Queued);
    this.rows += taken.length;
    this.schedule();
    return { queued: taken.length, result };
  }

  /**
   * The first offers the queue has room for, each within its tenant's share; counts them queued. The
   * first that does not fit ends the group's part, so a group keeps its order (`admit.ts`).
   */
  private take(offers: readonly Offer[]): readonly Offer[] {
    if (this.closed) return [];
    const share = Math.max(1, Math.floor(this.options.queueLimit / SHARE_DIVISOR));
    let n = 0;
    for (const o of offers) {
      if (this.rows + n >= this.options.queueLimit) break;
      const tenant = tenantOf(o);
      const held = this.byTenant.get(tenant) ?? 0;
      if (held >= share) {
        for (const d of offers.slice(n)) this.options.metrics.journalShareDropped.inc({ source: d.source });
        break;
      }
      this.byTenant.set(tenant, held + 1);
      n++;
    }
    return offers.slice(0, n);
  }

  /** Rows leave the queue (committed or failed): their tenants' shares free up. */
  private release(batch: readonly Queued[]): void {
    for (const q of batch)
      for (const o of q.offers) {
        const tenant = tenantOf(o);
        const held = (this.byTenant.get(tenant) ?? 0) - 1;
        if (held > 0) this.byTenant.set(tenant, held);
        else this.byTenant.delete(tenant);
      }
  }

  /** The answer stored for a group's key by an earlier commit, or undefined. */
  answered(source: Source, key: string): Promise<string | undefined> {
    return this.log.answer(source, key);
  }

  get queued(): number {
    return this.rows;
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.closed) void this.flush();
    });
  }

  /** Commits what is queued and stops: later offers are dropped (the daemon is shutting down). */
  async close(): Promise<void> {
    this.closed = true;
    await this.commits;
    while (this.queue.length > 0) {
      const before = this.queue.length;
      await this.flush();
      if (this.queue.length >= before) break;
    }
  }

  /**
   * The daemon's own derived rows (`../derive/`), committed now, outside the drop-on-full queue, with
   * `also` (the cursor they were derived up to, a stop they record) in the same transaction: a crash
   * neither loses nor repeats one. Stamped like a batch, so `at` stays non-decreasing in seq order.
   * Rejects when the commit fails; nothing of it is then in the store.
   */
  appendNow(
    offers: readonly Offer[],
    writes: readonly DerivedWrite[],
    options: { readonly unsynced?: boolean; readonly fenced?: boolean } = {},
  ): Promise<readonly number[]> {
    return this.serially(async () => {
      const at = await this.stamp();
      const seqs = await this.log.commitRows(
        offers.map((o) => ({ kind: o.kind, source: o.source, at, event: o.event })),
        writes,
        offers.length > 0 ? { ...options, beforeCommit: () => failpoint("derive.beforeCommit") } : options,
      );
      if (offers.length === 0) return seqs;
      failpoint("derive.afterCommit");
      this.lastAt = at;
      for (const o of offers) this.options.metrics.journalRows.inc({ source: o.source });
      this.options.onCommitted(seqs.at(-1) as number);
      return seqs;
    });
  }

  /**
   * Rows another journal admitted (`harness journal import`), committed now, outside the queue, in one
   * transaction. A row carrying the time it was admitted at there keeps it, unless that is earlier than
   * the row before it: such a row is refused and left out, the others commit. A row carrying none is
   * stamped as a batch is. Rejects when the commit fails; nothing of it is then in the store.
   */
  importNow(rows: readonly ImportedOffer[]): Promise<readonly ImportResult[]> {
    return this.serially(async () => {
      let lastAt = await this.lastCommitAt();
      const kept: NewRow[] = [];
      const placed = rows.map((o): number | undefined => {
        if (o.admittedAt !== undefined && o.admittedAt < lastAt) return undefined;
        const at = o.admittedAt ?? Math.max(lastAt, this.options.clock());
        lastAt = at;
        return kept.push({ kind: o.kind, source: o.source, at, event: o.event }) - 1;
      });
      const seqs = await this.log.commitRows(kept);
      this.lastAt = lastAt;
      const results = placed.map(
        (i): ImportResult =>
          i === undefined ? { kind: "refused" } : { kind: "committed", seq: seqs[i] as number },
      );
      results.forEach((r, i) => {
        if (r.kind === "committed")
          this.options.metrics.journalRows.inc({ source: (rows[i] as ImportedOffer).source });
      });
      const lastSeq = seqs.at(-1);
      if (lastSeq !== undefined) this.options.onCommitted(lastSeq);
      return results;
    });
  }

  private async lastCommitAt(): Promise<number> {
    this.lastAt ??= (await this.log.last()).at;
    return this.lastAt;
  }

  /** A batch's admission time: the clock, kept non-decreasing in seq order when it steps back. */
  private async stamp(): Promise<number> {
    return Math.max(await this.lastCommitAt(), this.options.clock());
  }

  /** Commits up to one batch; schedules itself again while rows remain, so producers get a turn. */
  flush(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    // Whole groups up to the batch size; a group larger than that is a batch of its own.
    let take = 0;
    let rows = 0;
    for (const q of this.queue) {
      if (take > 0 && rows + q.offers.length > this.options.batchSize) break;
      take++;
      rows += q.offers.length;
    }
    const batch = this.queue.splice(0, take);
    this.rows -= rows;
    this.release(batch);
    this.flushing = true;
    return this.serially(() => this.commitBatch(batch, rows)).finally(() => {
      this.flushing = false;
      if (this.queue.length > 0 && !this.closed) this.schedule();
    });
  }

  private async commitBatch(batch: readonly Queued[], rows: number): Promise<void> {
    let results: readonly GroupResult[];
    let at: number;
    try {
      at = await this.stamp();
      results = await this.log.commitGroups(
        // An offer is the row to append: no copy of each.
        batch.map((q) => ({ rows: q.offers, key: q.key })),
        at,
        { unsynced: batch.every((q) => q.unsynced), beforeCommit: () => failpoint("admit.beforeCommit") },
      );
    } catch (e) {
      const error = new Error(`journal: a batch of ${rows} rows was not admitted: ${(e as Error).message}`, {
        cause: e,
      });
      for (const q of batch) q.reject(error);
      this.options.onError(error);
      return;
    }
    failpoint("admit.afterCommit");
    this.lastAt = at;
    let lastSeq: number | undefined;
    batch.forEach((q, i) => {
      const r = results[i] as GroupResult;
      if (r.kind === "committed") {
        for (const o of q.offers) this.options.metrics.journalRows.inc({ source: o.source });
        lastSeq = r.seqs.at(-1) ?? lastSeq;
      }
      q.resolve(r);
    });
    if (lastSeq !== undefined) this.options.onCommitted(lastSeq);
  }
}
