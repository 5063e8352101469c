/**
 * The daemon's log: structured key-value lines (pino, JSON to stdout, written synchronously so a crash
 * loses no line), naming rule, hash, fire id and seq, and never a trace, a rationale or agent-written
 * text. Errors that repeat per row
 * (`eval_error`, `store_error`) are logged at most once per rule per hour; the metrics count every one.
 */
import { type DestinationStream, type Logger, pino } from "pino";

export type Log = Logger;

export function createLog(
  options: { readonly level?: string; readonly destination?: DestinationStream } = {},
): Log {
  const base = {
    level: options.level ?? "info",
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination === undefined
    ? pino(base, pino.destination({ fd: 1, sync: true }))
    : pino(base, options.destination);
}

/** Remembers when each key was last logged, so a repeating error is logged once an hour. */
export class OncePer {
  private readonly last = new Map<string, number>();
  constructor(private readonly periodMs: number) {}

  /** Whether `key` may be logged at `now` (and, if so, records that it was). */
  take(key: string, now: number): boolean {
    const t = this.last.get(key);
    if (t !== undefined && now - t < this.periodMs) return false;
    this.last.set(key, now);
    return true;
  }
}
