/**
 * Where the notifier keeps its cooldowns: when each (harness, event, rule) last went to the hook. The
 * daemon keeps them in its store, so a daemon restarted inside a cooldown does not notify again; the
 * notifier reaches them only through this interface and never knows it is SQLite.
 */
import type { NotifyEventName } from "./config.js";

/** What a cooldown is kept per: a repeat of all three inside the cooldown is suppressed. */
export interface CooldownKey {
  /** "" for a fleet target. */
  readonly harness: string;
  readonly event: NotifyEventName;
  readonly rule: string;
}

/** Called synchronously from `offer`; a method that throws is reported, and the event still goes out. */
export interface CooldownStore {
  /** When `key` last went into the hook's queue, ms; undefined when never, or since forgotten. */
  lastSent(key: CooldownKey): number | undefined;
  /** `key` went into the hook's queue at `at`. */
  recordSent(key: CooldownKey, at: number): void;
  /** Forgets every key last sent at or before `at`: their cooldowns are over. */
  forgetSentBy(at: number): void;
}
