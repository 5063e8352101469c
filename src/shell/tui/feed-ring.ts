/**
 * The feed's memory: a bounded ring of what the stream and the catch-up reads brought, in journal order,
 * so that an hour of a busy fleet (or a burst of a thousand fires a second) costs the same memory as a
 * minute of it. Fires are deduplicated by id, since a catch-up read after a gap or a reconnect returns
 * fires the stream may also have delivered; the oldest entry leaves when the ring is full.
 */
import { parseFireId } from "../../core/fire-id.js";
import type { JournalRowIds } from "../rpc/gen/harness/v1/journal_query_pb.js";
import type { FireInfo, HoldRecord } from "../rpc/gen/harness/v1/rules_pb.js";

/** Where an entry sits in journal order: the row's seq, then its place among that row's events. */
export type FeedKey = readonly [seq: number, sub: number];

export type FeedEntry =
  | { readonly kind: "fire"; readonly key: FeedKey; readonly fire: FireInfo }
  | { readonly kind: "hold"; readonly key: FeedKey; readonly hold: HoldRecord }
  | { readonly kind: "released"; readonly key: FeedKey; readonly hold: HoldRecord }
  | { readonly kind: "gap"; readonly key: FeedKey; readonly missed: number; readonly atMs: number }
  | { readonly kind: "notice"; readonly key: FeedKey; readonly text: string; readonly atMs: number }
  /** The loop guard's stop of a run: its `loop_stopped` row, which no rule made. */
  | { readonly kind: "loop_stop"; readonly key: FeedKey; readonly row: JournalRowIds }
  /** The stale run closer's close of a run: its `closed` row, and ExplainFire's sentence of it. */
  | {
      readonly kind: "stale_close";
      readonly key: FeedKey;
      readonly row: JournalRowIds;
      readonly sentence: string;
    };

export const DEFAULT_FEED_SIZE = 1_000;

const before = (a: FeedKey, b: FeedKey): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** A guard's decision's place: its row, before the fires rules made on that row. */
export const guardKey = (row: JournalRowIds): FeedKey => [Number(row.seq), -1];

/** A fire's place: `f-<seq>-<n>` gives the row and the fire's place among the row's fires. */
export function fireKey(f: FireInfo): FeedKey {
  return [Number(f.seq), (parseFireId(f.fireId)?.index ?? 0) * 2];
}

export class FeedRing {
  /** Oldest first. */
  private readonly entries: FeedEntry[] = [];
  private readonly fireIds = new Set<string>();

  constructor(readonly capacity = DEFAULT_FEED_SIZE) {}

  get size(): number {
    return this.entries.length;
  }

  has(fireId: string): boolean {
    return this.fireIds.has(fireId);
  }

  /** Adds an entry in journal order; false for a fire already in the ring. */
  add(e: FeedEntry): boolean {
    if (e.kind === "fire") {
      if (this.fireIds.has(e.fire.fireId)) return false;
      this.fireIds.add(e.fire.fireId);
    }
    const last = this.entries[this.entries.length - 1];
    if (last === undefined || !before(e.key, last.key)) this.entries.push(e);
    else {
      // Older than the newest: a catch-up read after the stream moved on. Binary search its place.
      let lo = 0;
      let hi = this.entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (before(e.key, (this.entries[mid] as FeedEntry).key)) hi = mid;
        else lo = mid + 1;
      }
      this.entries.splice(lo, 0, e);
    }
    while (this.entries.length > this.capacity) {
      const gone = this.entries.shift() as FeedEntry;
      if (gone.kind === "fire") this.fireIds.delete(gone.fire.fireId);
    }
    return true;
  }

  /** Replaces a fire in the ring (its actions' outcomes moved on); false when it is not there. */
  update(fire: FireInfo): boolean {
    if (!this.fireIds.has(fire.fireId)) return false;
    const i = this.entries.findIndex((e) => e.kind === "fire" && e.fire.fireId === fire.fireId);
    if (i < 0) return false;
    this.entries[i] = { kind: "fire", key: fireKey(fire), fire };
    return true;
  }

  /** Newest first, as the feed shows it. */
  newestFirst(): FeedEntry[] {
    return this.entries.slice().reverse();
  }

  /** The key of the newest entry, or [0, 0]. */
  newestKey(): FeedKey {
    return this.entries[this.entries.length - 1]?.key ?? [0, 0];
  }
}
