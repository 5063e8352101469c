/**
 * PgTokenStore answers as TokenStore does: the same calls (inserts, revocations, redemptions, a run's
 * gateway tokens revoked, and the reads) give the same answers and leave the same `issued_tokens` on
 * both backends, a refused call (an id or a digest given twice) refused on both with nothing written;
 * and an enrolment code redeemed by two clients at once is spent by one of them.
 */
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgTokenStore } from "../../../../src/shell/store/pg/pg-token-store.js";
import { type IssuedTokenRow, TOKEN_KINDS, TokenStore } from "../../../../src/shell/store/token-store.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const IDS = ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"];
const RUNS = ["impl#1", "impl#2"];

const tokenArb: fc.Arbitrary<IssuedTokenRow> = fc.record(
  {
    id: fc.constantFrom(...IDS),
    digest: fc.integer({ min: 0, max: 7 }).map((n) => Buffer.from([n, 0xff - n])),
    kind: fc.constantFrom(...TOKEN_KINDS),
    source: fc.constantFrom("observer", "ledger"),
    harness: fc.constantFrom("impl", "review"),
    run: fc.constantFrom(...RUNS),
    label: fc.constantFrom("", "laptop", "ci"),
    createdMs: fc.integer({ min: 0, max: 5 }),
    expiresMs: fc.integer({ min: 0, max: 10 }),
  },
  { requiredKeys: ["id", "digest", "kind", "createdMs"] },
);

type Op =
  | { readonly op: "insert"; readonly token: IssuedTokenRow }
  | { readonly op: "revoke"; readonly ids: readonly string[]; readonly now: number }
  | {
      readonly op: "redeem";
      readonly code: string;
      readonly tokens: readonly IssuedTokenRow[];
      readonly now: number;
    }
  | { readonly op: "revokeGatewayOfRun"; readonly run: string; readonly now: number }
  | { readonly op: "all" }
  | { readonly op: "inForce"; readonly now: number }
  | { readonly op: "gatewayIdsOfRun"; readonly run: string };

const now = fc.integer({ min: 0, max: 12 });
/** A weighted choice of call. */
const w = (weight: number, arbitrary: fc.Arbitrary<Op>) => ({ weight, arbitrary });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  w(
    4,
    tokenArb.map((token) => ({ op: "insert" as const, token })),
  ),
  w(
    1,
    fc.record({
      op: fc.constant("revoke" as const),
      ids: fc.array(fc.constantFrom(...IDS), { maxLength: 4 }),
      now,
    }),
  ),
  w(
    2,
    fc.record({
      op: fc.constant("redeem" as const),
      code: fc.constantFrom(...IDS),
      tokens: fc.array(tokenArb, { maxLength: 3 }),
      now,
    }),
  ),
  w(1, fc.record({ op: fc.constant("revokeGatewayOfRun" as const), run: fc.constantFrom(...RUNS), now })),
  w(1, fc.constant({ op: "all" as const })),
  w(1, fc.record({ op: fc.constant("inForce" as const), now })),
  w(1, fc.record({ op: fc.constant("gatewayIdsOfRun" as const), run: fc.constantFrom(...RUNS) })),
);

/** What a call answered, or that it was refused (the two backends' errors differ in text, not in kind). */
type Answer = { readonly value: unknown } | { readonly refused: true };

async function answer(call: () => unknown): Promise<Answer> {
  try {
    return { value: await call() };
  } catch {
    return { refused: true };
  }
}

/** The ids come in each backend's order (see PgTokenStore.gatewayIdsOfRun): compared as a set. */
const sorted = (ids: unknown): unknown => (Array.isArray(ids) ? [...ids].sort() : ids);

function run(store: TokenStore | PgTokenStore, o: Op): Promise<Answer> {
  switch (o.op) {
    case "insert":
      return answer(() => store.insert(o.token));
    case "revoke":
      return answer(() => store.revoke(o.ids, o.now));
    case "redeem":
      return answer(() => store.redeem(o.code, o.tokens, o.now));
    case "revokeGatewayOfRun":
      return answer(() => store.revokeGatewayOfRun(o.run, o.now));
    case "all":
      return answer(() => store.all());
    case "inForce":
      return answer(() => store.inForce(o.now));
    case "gatewayIdsOfRun":
      return answer(async () => sorted(await store.gatewayIdsOfRun(o.run)));
  }
}

const TABLE = "SELECT * FROM issued_tokens ORDER BY id";
const sqliteTable = (db: Db): unknown[] => db.prepare(TABLE).all();
const pgTable = async (pool: pg.Pool): Promise<unknown[]> => (await pool.query(TABLE)).rows;

describe("PgTokenStore against TokenStore", () => {
  const stores = tempStores("harness-token-contract-");
  let pgStore: OpenedPgStore;

  beforeAll(async () => {
    pgStore = await openFreshPgStore("token_contract", 4);
  });
  afterAll(async () => {
    await pgStore?.close();
  });

  it("the same calls give the same answers and the same issued_tokens on both backends", async () => {
    const db = stores.open(stores.storeFile()).db;
    const sqlite = new TokenStore(db);
    const postgres = new PgTokenStore(pgStore.pool);
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
        db.prepare("DELETE FROM issued_tokens").run();
        await pgStore.pool.query("DELETE FROM issued_tokens");
        for (const [i, o] of ops.entries()) {
          const fromSqlite = await run(sqlite, o);
          expect(await run(postgres, o), `call ${i}: ${o.op}`).toEqual(fromSqlite);
        }
        expect(await pgTable(pgStore.pool)).toEqual(sqliteTable(db));
      }),
      { numRuns: runs(60) },
    );
  });

  it("two clients redeeming one enrolment code at once: one spends it, the other's tokens are not inserted", async () => {
    const tokens = new PgTokenStore(pgStore.pool);
    await pgStore.pool.query("DELETE FROM issued_tokens");
    await tokens.insert({ id: "code", digest: Buffer.from("code"), kind: "enrolment", createdMs: 1 });
    const machine = (name: string): IssuedTokenRow[] =>
      ["observer", "ledger"].map((source) => ({
        id: `${name}-${source}`,
        digest: Buffer.from(`${name}-${source}`),
        kind: "producer",
        source,
        createdMs: 2,
      }));

    // A third client holds the code's row, so both redemptions are in their UPDATE, waiting on it, when
    // it lets go: they race for the row, not one after the other.
    const holder = await pgStore.pool.connect();
    let results: boolean[];
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM issued_tokens WHERE id = 'code' FOR UPDATE");
      const racing = Promise.all([
        tokens.redeem("code", machine("a"), 3),
        tokens.redeem("code", machine("b"), 4),
      ]);
      await waitForLockWaiters(pgStore.pool, 2);
      await holder.query("COMMIT");
      results = await racing;
    } finally {
      holder.release();
    }

    expect([...results].sort()).toEqual([false, true]);
    const winner = results[0] === true ? "a" : "b";
    const rows = (
      await pgStore.pool.query<{ id: string; revoked_at: number | null }>(
        "SELECT id, revoked_at FROM issued_tokens ORDER BY id",
      )
    ).rows;
    expect(rows).toEqual([
      { id: `${winner}-ledger`, revoked_at: null },
      { id: `${winner}-observer`, revoked_at: null },
      { id: "code", revoked_at: winner === "a" ? 3 : 4 },
    ]);
  });

  it("revokes a run's gateway tokens inside the caller's transaction: rolled back with it", async () => {
    const tokens = new PgTokenStore(pgStore.pool);
    await pgStore.pool.query("DELETE FROM issued_tokens");
    await tokens.insert({ id: "g", digest: Buffer.from("g"), kind: "gateway", run: "impl#1", createdMs: 1 });
    const client = await pgStore.pool.connect();
    try {
      await client.query("BEGIN");
      await tokens.revokeGatewayOfRun("impl#1", 5, client);
      expect(await tokens.gatewayIdsOfRun("impl#1")).toEqual(["g"]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await tokens.gatewayIdsOfRun("impl#1")).toEqual(["g"]);
    await tokens.revokeGatewayOfRun("impl#1", 6);
    expect(await tokens.gatewayIdsOfRun("impl#1")).toEqual([]);
  });
});

/** Waits until `n` backends of this database wait on a row lock (what the race test stages). */
async function waitForLockWaiters(pool: pg.Pool, n: number): Promise<void> {
  for (;;) {
    const r = await pool.query<{ n: number }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if ((r.rows[0] as { n: number }).n >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
