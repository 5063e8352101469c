/**
 * The notify hook's cooldowns in the store's `notify_cooldowns`: when each (harness, event, rule) last
 * went to the hook. The daemon hands this to its notifier as the notifier's `CooldownStore` (the shapes
 * match; neither module imports the other), so a restart inside a cooldown does not notify again.
 */
import type { Db } from "./open-store.js";

/** One cooldown's key; `event` is one of the notifier's event names. */
export interface NotifyCooldownKey {
  readonly harness: string;
  readonly event: string;
  readonly rule: string;
}

export class NotifyCooldowns {
  private readonly select;
  private readonly upsert;
  private readonly forget;

  constructor(db: Db) {
    this.select = db.prepare<[string, string, string], { sent_at: number }>(
      "SELECT sent_at FROM notify_cooldowns WHERE harness = ? AND event = ? AND rule = ?",
    );
    this.upsert = db.prepare<[string, string, string, number]>(
      `INSERT INTO notify_cooldowns (harness, event, rule, sent_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (harness, event, rule) DO UPDATE SET sent_at = excluded.sent_at`,
    );
    this.forget = db.prepare<[number]>("DELETE FROM notify_cooldowns WHERE sent_at <= ?");
  }

  lastSent(key: NotifyCooldownKey): number | undefined {
    return this.select.get(key.harness, key.event, key.rule)?.sent_at;
  }

  recordSent(key: NotifyCooldownKey, at: number): void {
    this.upsert.run(key.harness, key.event, key.rule, at);
  }

  forgetSentBy(at: number): void {
    this.forget.run(at);
  }
}
