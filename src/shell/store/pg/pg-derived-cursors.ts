/**
 * SQLite's `DerivedCursors` on PostgreSQL (issue 34): each daemon-derived row producer's cursor. The
 * journal writer sets it in the transaction of the rows derived (`pg-write-ports.ts`); `set` here is the
 * same statement, inside the caller's transaction when it passes its client.
 */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import type { DerivedCursors } from "../derived-cursors.js";

export class PgDerivedCursors implements AsyncPort<DerivedCursors> {
  constructor(private readonly pool: pg.Pool) {}

  /** The producer's cursor, or undefined before its first commit. */
  async get(name: string): Promise<number | undefined> {
    const r = await this.pool.query<{ cursor: number }>(
      "SELECT cursor FROM derived_cursors WHERE name = $1",
      [name],
    );
    return r.rows[0]?.cursor;
  }

  async set(name: string, cursor: number, client?: pg.PoolClient): Promise<void> {
    await (client ?? this.pool).query(
      "INSERT INTO derived_cursors (name, cursor) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor",
      [name, cursor],
    );
  }
}
