/**
 * A pooled connection for one piece of work, and one transaction on it. node-postgres' pool listens for a
 * connection's errors only while it is idle: a connection lost while checked out (the server crashed, the
 * network went) emits `error` with nobody listening, and that throws in the process: the daemon would
 * die with its database. Each checkout here listens for as long as it holds the connection (the work's
 * own queries reject with the cause), and a connection whose work failed is destroyed rather than given
 * back, so no broken connection, nor one left inside a transaction, returns to the pool.
 */
import type pg from "pg";

/** Ignores a lost connection's event: the query under way rejects with the same error. */
const lost = (): void => {};

/** The connection, listened to while held: given back when `work` resolves, destroyed when it rejects. */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await checkout(pool);
  let result: T;
  try {
    result = await work(client);
  } catch (e) {
    // The listener stays: a destroyed connection may still report its socket's end.
    client.release(e instanceof Error ? e : new Error(String(e)));
    throw e;
  }
  giveBack(client);
  return result;
}

/**
 * `work` in one transaction begun by `begin` (`BEGIN`, with an isolation level where it needs one):
 * committed when it resolves, rolled back when it rejects.
 */
export function inTransaction<T>(
  pool: pg.Pool,
  begin: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query(begin);
    let result: T;
    try {
      result = await work(client);
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    }
    await client.query("COMMIT");
    return result;
  });
}

/** A connection held across calls (a snapshot read in pages): listened to until `giveBack` or `destroy`. */
export async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  client.on("error", lost);
  return client;
}

/** A held connection, its work done, back to the pool (which listens to it while idle). */
export function giveBack(client: pg.PoolClient): void {
  client.off("error", lost);
  client.release();
}

/** What a statement runs on: the pool (a statement of its own) or a transaction's client. */
export type PgQueryable = Pick<pg.PoolClient, "query">;

/** `work` inside the caller's transaction when it gives its client, else in a transaction of its own. */
export const onClient = <T>(
  pool: pg.Pool,
  client: pg.PoolClient | undefined,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> => (client === undefined ? inTransaction(pool, "BEGIN", work) : work(client));
