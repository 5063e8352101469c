/**
 * One PostgreSQL transaction on one pooled client, what a SQLite store object's `db.transaction` is to
 * it: `work` runs between BEGIN and COMMIT, a throw rolls back and rejects with what was thrown, and the
 * client goes back to the pool either way. A method documented "inside the caller's transaction" takes
 * the caller's client instead (`onClient`).
 */
import type pg from "pg";

/** What a statement runs on: the pool (a statement of its own) or a transaction's client. */
export type PgQueryable = Pick<pg.PoolClient, "query">;

export async function inPgTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

/** `work` inside the caller's transaction when it gives its client, else in a transaction of its own. */
export const onClient = <T>(
  pool: pg.Pool,
  client: pg.PoolClient | undefined,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> => (client === undefined ? inPgTransaction(pool, work) : work(client));
