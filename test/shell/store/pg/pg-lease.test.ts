/**
 * The leader's lease on PostgreSQL (`pg-lease.ts`, issue 35): one daemon leads at a time, named to the
 * others; a lease given up is taken at once, one lapsed when the database says so; each taking raises
 * the epoch, and a commit fenced by an older epoch is refused, while one under way holds a takeover
 * back until it ends; a daemon of another schema version refuses to lead; the leader's progress reaches
 * the followers, and a follower's commits reach the leader.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type LeadershipEvents,
  LeaseLostError,
  type Progress,
} from "../../../../src/shell/store/leadership.js";
import { openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgLease, parseProgress } from "../../../../src/shell/store/pg/pg-lease.js";
import { PG_SCHEMA_VERSION } from "../../../../src/shell/store/pg/pg-schema.js";
import { type PgDatabase, pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase } from "./pg-store.js";

let db: PgDatabase;
let admin: pg.Client;
const leases: PgLease[] = [];

beforeAll(async () => {
  db = await freshPgDatabase("pg_lease");
  // Migrated as a daemon's start does.
  await (await openPgStore(pgOptions(db))).close();
  admin = new pg.Client(pgOptions(db));
  await admin.connect();
});

afterEach(async () => {
  for (const l of leases.splice(0)) await l.close();
  // The next test starts with no lease held and the schema this build writes.
  await admin.query("UPDATE harness_lease SET expires_at = 0");
  await admin.query("UPDATE harness_schema SET version = $1", [PG_SCHEMA_VERSION]);
});

afterAll(async () => {
  await admin.end();
});

const until = async (done: () => boolean, what: string, ms = 15_000): Promise<void> => {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** A lease and what it was told, in order. */
async function lease(owner: string, ttlMs = 3_000, schemaVersion = PG_SCHEMA_VERSION) {
  const told: string[] = [];
  const progress: Progress[] = [];
  const rows = { heard: 0 };
  const tokens = { heard: 0 };
  const events: LeadershipEvents = {
    lead: (epoch) => told.push(`lead ${epoch}`),
    follow: (reason) => told.push(`follow: ${reason}`),
    progress: (p) => progress.push(p),
    rows: () => rows.heard++,
    tokens: () => tokens.heard++,
  };
  const l = new PgLease(pgOptions(db), owner, { ttlMs, schemaVersion });
  leases.push(l);
  await l.start(events);
  return { l, told, progress, rows, tokens };
}

describe("the leader's lease", () => {
  it("is held by one daemon at a time, named to the others, and taken at once when given up", async () => {
    const a = await lease("harness daemon (pid 1 on a)");
    const b = await lease("harness daemon (pid 2 on b)");
    expect(a.l.epoch).toBeGreaterThan(0);
    const first = a.l.epoch as number;
    expect(a.told).toEqual([`lead ${first}`]);
    expect(b.l.epoch).toBeUndefined();
    expect(b.l.notLeading).toBe(`harness daemon (pid 1 on a) leads (epoch ${first})`);
    expect(await b.l.leader()).toMatchObject({ holder: "harness daemon (pid 1 on a)", epoch: first });
    // Given up: the follower hears it and takes the lease without waiting for it to lapse (10 s here).
    const slow = await lease("harness daemon (pid 3 on c)", 10_000);
    await a.l.close();
    await until(() => b.l.epoch !== undefined || slow.l.epoch !== undefined, "a follower to take over");
    const taker = b.l.epoch !== undefined ? b : slow;
    expect(taker.l.epoch).toBe(first + 1);
  });

  it("refuses a commit fenced by an epoch taken over, and holds a takeover back while a fenced commit is under way", async () => {
    const a = await lease("harness daemon (pid 1 on a)");
    const epoch = a.l.epoch as number;
    const tx = new pg.Client(pgOptions(db));
    await tx.connect();
    try {
      await tx.query("CREATE TABLE IF NOT EXISTS fenced_writes (n integer)");
      await tx.query("BEGIN");
      await a.l.fence(tx);
      await tx.query("INSERT INTO fenced_writes VALUES (1)");
      // Another daemon's takeover waits for the fenced transaction.
      let took = false;
      const takeover = admin
        .query("UPDATE harness_lease SET epoch = epoch + 1, holder = 'harness daemon (pid 9 on z)'")
        .then(() => {
          took = true;
        });
      await new Promise((r) => setTimeout(r, 300));
      expect(took).toBe(false);
      await tx.query("COMMIT");
      await takeover;
      // The commit landed before the takeover; the next one is refused, and the daemon follows.
      await tx.query("BEGIN");
      await expect(a.l.fence(tx)).rejects.toBeInstanceOf(LeaseLostError);
      await tx.query("ROLLBACK");
      expect(a.l.epoch).toBeUndefined();
      expect(a.told).toEqual([
        `lead ${epoch}`,
        `follow: harness daemon (pid 9 on z) took the lease (epoch ${epoch + 1})`,
      ]);
      expect((await admin.query("SELECT count(*)::int AS n FROM fenced_writes")).rows).toEqual([{ n: 1 }]);
    } finally {
      await tx.end();
    }
  });

  it("stops leading by its own clock when its renewals go unanswered, before the database lets the lease lapse", async () => {
    // A lease of 5 s: the daemon counts it lapsed a full second before the database would.
    const a = await lease("harness daemon (pid 1 on a)", 5_000);
    const epoch = a.l.epoch as number;
    const lock = new pg.Client(pgOptions(db));
    await lock.connect();
    try {
      // The row locked elsewhere: the leader's renewals wait, as they would for a server that stopped answering.
      await lock.query("BEGIN");
      await lock.query("SELECT 1 FROM harness_lease FOR UPDATE");
      // The moment the daemon's own clock says lapsed (its getter), not when its timer gets to run.
      await until(() => a.l.epoch === undefined, "the leader to stop counting the lease held");
      const r = await lock.query<{ left: string }>(
        "SELECT (expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text AS left FROM harness_lease",
      );
      // It stopped before the database would let another daemon take the lease.
      expect(Number(r.rows[0]?.left)).toBeGreaterThan(0);
      await until(() => a.told.length === 2, "the leader to be told");
      expect(a.told).toEqual([`lead ${epoch}`, "follow: the lease lapsed: its renewals went unanswered"]);
      await expect(a.l.fence(lock)).rejects.toBeInstanceOf(LeaseLostError);
    } finally {
      await lock.query("ROLLBACK").catch(() => {});
      await lock.end();
    }
  });

  it("A daemon with an older schema version refuses to lead, and a leader whose database moved on stops leading", async () => {
    const old = await lease("harness daemon (pid 1 on old)", 600, PG_SCHEMA_VERSION - 1);
    expect(old.l.epoch).toBeUndefined();
    expect(old.l.notLeading).toBe(
      `the database's schema version ${PG_SCHEMA_VERSION} differs from this daemon's (${PG_SCHEMA_VERSION - 1}): it does not lead`,
    );
    const current = await lease("harness daemon (pid 2 on new)", 600);
    expect(current.l.epoch).toBeDefined();
    try {
      // A newer daemon migrated the database: this one no longer writes its schema, and stops leading.
      await admin.query("UPDATE harness_schema SET version = $1", [PG_SCHEMA_VERSION + 1]);
      await until(() => current.l.epoch === undefined, "the leader to stop leading");
      expect(current.told.at(-1)).toBe(
        `follow: the database's schema version ${PG_SCHEMA_VERSION + 1} differs from this daemon's (${PG_SCHEMA_VERSION}): it does not lead`,
      );
    } finally {
      await admin.query("UPDATE harness_schema SET version = $1", [PG_SCHEMA_VERSION]);
      await admin.query("UPDATE harness_lease SET expires_at = 0");
    }
  });

  it("tells the followers the leader's progress", async () => {
    const a = await lease("harness daemon (pid 1 on a)");
    const b = await lease("harness daemon (pid 2 on b)");
    const p: Progress = {
      epoch: a.l.epoch as number,
      cursor: 42,
      stored: 40,
      at: 1_700,
      fireCommits: 3,
      changed: true,
    };
    a.l.announce(p);
    await until(() => b.progress.length > 0, "the follower to hear the progress");
    expect(b.progress).toEqual([p]);
    // The leader hears nothing of its own.
    expect(a.progress).toEqual([]);
  });

  it("tells the leader that a follower committed rows", async () => {
    const a = await lease("harness daemon (pid 1 on a)");
    const b = await lease("harness daemon (pid 2 on b)");
    for (let i = 0; i < 5; i++) b.l.rowsCommitted();
    await until(() => a.rows.heard > 0, "the leader to hear of the rows");
    // Told at most twice for five commits at once: one on its way, one after it.
    await new Promise((r) => setTimeout(r, 200));
    expect(a.rows.heard).toBeLessThanOrEqual(2);
    expect(b.rows.heard).toBe(0);
  });

  it("tells every daemon that one changed the issued tokens, whichever leads", async () => {
    const a = await lease("harness daemon (pid 1 on a)");
    const b = await lease("harness daemon (pid 2 on b)");
    b.l.tokensChanged();
    await until(() => a.tokens.heard > 0, "the leader to hear of the tokens");
    a.l.tokensChanged();
    await until(() => b.tokens.heard > 1, "the follower to hear of the tokens");
  });

  it("reads a progress only from a bounded, well-formed payload", () => {
    expect(parseProgress('{"epoch":1,"cursor":2,"stored":2,"at":3,"fireCommits":0,"changed":false}')).toEqual(
      {
        epoch: 1,
        cursor: 2,
        stored: 2,
        at: 3,
        fireCommits: 0,
        changed: false,
      },
    );
    for (const bad of [
      undefined,
      "",
      "not json",
      "null",
      '{"epoch":-1,"cursor":2,"stored":2,"at":3,"fireCommits":0,"changed":false}',
      '{"epoch":1,"cursor":2.5,"stored":2,"at":3,"fireCommits":0,"changed":false}',
      '{"epoch":1,"cursor":2,"stored":2,"at":3,"fireCommits":0,"changed":"yes"}',
      `{"epoch":1,"cursor":2,"stored":2,"at":3,"fireCommits":0,"changed":false,"pad":"${"x".repeat(600)}"}`,
    ])
      expect(parseProgress(bad), String(bad)).toBeUndefined();
  });
});
