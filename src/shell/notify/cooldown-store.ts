/**
 * Where the notifier keeps its cooldowns: when each (harness, event, rule) last went to the hook. The
 * daemon keeps them in its store, so a daemon restarted inside a cooldown does not notify again; the
 * notifier reaches them only through this interface and never knows which store holds them.
 */
import type { NotifyEventName } from "./config.js";

/** What a cooldown is kept per: a repeat of all three inside the cooldown is suppressed. */
export interface CooldownKey {
  /** "" for a fleet target. */
  readonly harness: string;
  readonly event: NotifyEventName;
  readonly rule: string;
}

/**
 * Asynchronous, as the store is (its calls may be round trips); the notifier makes one offer's calls at
 * a time. A method that rejects (or throws) is reported, and the event still goes out.
 */
export interface CooldownStore {
  /** When `key` last went into the hook's queue, ms; undefined when never, or since forgotten. */
  lastSent(key: CooldownKey): Promise<number | undefined>;
  /** `key` went into the hook's queue at `at`. */
  recordSent(key: CooldownKey, at: number): Promise<void>;
  /** Forgets every key last sent at or before `at`: their cooldowns are over. */
  forgetSentBy(at: number): Promise<void>;
}
