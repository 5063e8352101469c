/** The notify hook's cooldowns on PostgreSQL (`../notify-cooldowns.ts`): each call one statement. */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import type { NotifyCooldownKey, NotifyCooldowns } from "../notify-cooldowns.js";

export class PgNotifyCooldowns implements AsyncPort<NotifyCooldowns> {
  constructor(private readonly pool: pg.Pool) {}

  async lastSent(key: NotifyCooldownKey): Promise<number | undefined> {
    const r = await this.pool.query<{ sent_at: number }>(
      "SELECT sent_at FROM notify_cooldowns WHERE harness = $1 AND event = $2 AND rule = $3",
      [key.harness, key.event, key.rule],
    );
    return r.rows[0]?.sent_at;
  }

  async recordSent(key: NotifyCooldownKey, at: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO notify_cooldowns (harness, event, rule, sent_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (harness, event, rule) DO UPDATE SET sent_at = excluded.sent_at`,
      [key.harness, key.event, key.rule, at],
    );
  }

  async forgetSentBy(at: number): Promise<void> {
    await this.pool.query("DELETE FROM notify_cooldowns WHERE sent_at <= $1", [at]);
  }
}
