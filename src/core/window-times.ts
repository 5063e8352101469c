/**
 * The admission times of one window-index bucket, ascending, and how many fall inside a window.
 *
 * Rows are evaluated in seq order and the admission clock never goes back, so for one window length
 * the window's start only moves forward from one query to the next. Each length asked for keeps a
 * cursor at its start: a query moves it past the times that left the window, usually a step or none,
 * rather than binary-searching the whole week of times (whose probes, over many buckets, are cache
 * misses). A query for an earlier `now` (not made by a fold, but allowed) falls back to the search.
 */

/** Index of the first time strictly after `t` in `times[from..]` (the window is open at its start). */
function firstAfter(times: readonly number[], t: number, from = 0): number {
  let lo = from;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Past this many steps a cursor stops walking and searches the rest. */
const WALK = 8;

export class WindowTimes {
  private readonly times: number[] = [];
  // One cursor per window length asked for (a rule set uses a handful): parallel arrays, scanned.
  private readonly lengths: number[] = [];
  /** Per length: the last start asked for (`now - length`) … */
  private readonly cuts: number[] = [];
  /** … and the index of the first time after it. */
  private readonly starts: number[] = [];

  get size(): number {
    return this.times.length;
  }

  get oldest(): number | undefined {
    return this.times[0];
  }

  /** Appends a time; times arrive in ascending order. */
  push(at: number): void {
    this.times.push(at);
  }

  /** How many times are in `(now - lengthMs, now]`, given every time is at most `now`. */
  countWithin(now: number, lengthMs: number): number {
    const cut = now - lengthMs;
    const { times, lengths, cuts, starts } = this;
    let k = 0;
    while (k < lengths.length && lengths[k] !== lengthMs) k++;
    let start: number;
    if (k === lengths.length) {
      start = firstAfter(times, cut);
      lengths.push(lengthMs);
      cuts.push(cut);
      starts.push(start);
    } else if (cut >= (cuts[k] as number)) {
      start = starts[k] as number;
      const stop = Math.min(times.length, start + WALK);
      while (start < stop && (times[start] as number) <= cut) start++;
      if (start === stop && start < times.length && (times[start] as number) <= cut)
        start = firstAfter(times, cut, start);
      cuts[k] = cut;
      starts[k] = start;
    } else {
      start = firstAfter(times, cut);
    }
    return times.length - start;
  }

  /** Drops the times at or before `before`; returns how many remain. */
  dropThrough(before: number): number {
    const drop = firstAfter(this.times, before);
    if (drop > 0) {
      this.times.splice(0, drop);
      for (let k = 0; k < this.starts.length; k++)
        this.starts[k] = Math.max(0, (this.starts[k] as number) - drop);
    }
    return this.times.length;
  }
}
