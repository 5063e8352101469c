/**
 * One PostgreSQL transaction on one pooled client, what `db.transaction(fn)()` is to SQLite: `begin`,
 * the work, COMMIT; ROLLBACK when the work throws (its error is the one rethrown); the client released
 * in every case.
 */
import type pg from "pg";

export async function inPgTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
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
