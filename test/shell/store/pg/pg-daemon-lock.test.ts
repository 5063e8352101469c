/**
 * One daemon per database on PostgreSQL (`pg-daemon-lock.ts`): a second daemon is refused naming the
 * first; the lock is taken again after its session is lost; and a daemon whose lock another took while
 * its session was gone is told, so it stops rather than evaluating beside the other.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgDaemonLock, type PgDaemonLockError } from "../../../../src/shell/store/pg/pg-daemon-lock.js";
import { type PgDatabase, pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase } from "./pg-store.js";

let db: PgDatabase;
let admin: pg.Client;
const held: PgDaemonLock[] = [];

beforeAll(async () => {
  db = await freshPgDatabase("pg_daemon_lock");
  admin = new pg.Client(pgOptions(db));
  await admin.connect();
});

afterAll(async () => {
  for (const l of held) await l.release();
  await admin.end();
});

const until = async (done: () => boolean, what: string): Promise<void> => {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

async function acquire(
  owner: string,
  onLost: (e: PgDaemonLockError) => void = () => {},
): Promise<PgDaemonLock> {
  const lock = await PgDaemonLock.acquire(pgOptions(db), "postgresql test", owner, onLost);
  held.push(lock);
  return lock;
}

/** Ends the lock holder's session on the server, as a restart or a network cut would. */
const cut = (owner: string) =>
  admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [owner]);

describe("one daemon per database", () => {
  it("refuses a second daemon, naming the first as the server knows it, and lets it in once the first is gone", async () => {
    const first = await acquire("harness daemon (pid 1 on a)");
    await expect(acquire("harness daemon (pid 2 on b)")).rejects.toThrow(
      /store postgresql test: another harness daemon runs on this database: harness daemon \(pid 1 on a\) \(server pid \d+, on the socket\)/,
    );
    await first.release();
    const second = await acquire("harness daemon (pid 2 on b)");
    expect(second.held).toBe(true);
    await second.release();
  });

  it("takes the lock again after its session is lost", async () => {
    const lock = await acquire("harness daemon (pid 3 on c)");
    await cut("harness daemon (pid 3 on c)");
    await until(() => !lock.held, "the lost session to be seen");
    await until(() => lock.held, "the lock taken again");
    await expect(acquire("harness daemon (pid 4 on d)")).rejects.toThrow(/pid 3 on c/);
    await lock.release();
  });

  it("tells the daemon whose lock another took while its session was gone", async () => {
    const lost: PgDaemonLockError[] = [];
    const lock = await acquire("harness daemon (pid 5 on e)", (e) => lost.push(e));
    await cut("harness daemon (pid 5 on e)");
    await until(() => !lock.held, "the lost session to be seen");
    const other = await acquire("harness daemon (pid 6 on f)");
    await until(() => lost.length > 0, "the loss to be told");
    expect(lost[0]?.message).toMatch(
      /another harness daemon runs on this database: harness daemon \(pid 6 on f\)/,
    );
    expect(lock.held).toBe(false);
    await other.release();
  });
});
