/**
 * PgProposalStore answers as ProposalStore does: the same proposals stored get the same ids, the same
 * checked changes (pull requests opened, pushed to, merged or closed; hashes rejected) leave the same
 * rule_proposals, rule_proposal_pulls and rule_proposal_rejections, and every read answers alike.
 */
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgProposalStore } from "../../../../src/shell/store/pg/pg-proposal-store.js";
import {
  type NewProposal,
  PROPOSAL_STATES,
  type ProposalBacktest,
  type ProposalChange,
  type ProposalState,
  ProposalStore,
  type PullState,
} from "../../../../src/shell/store/proposal-store.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const REPOS = ["acme/policy", "acme/other"];
const HASHES = ["h1", "h2", "h3"];
const RUNS = ["impl#1", "impl#2", "review#1"];
const IDS = ["p-1", "p-2", "p-3", "p-4", "p-0", "p-x"];
/** Mostly the first proposals, so changes meet on one pull request and end one another. */
const idArb = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom("p-1", "p-2", "p-3") },
  { weight: 1, arbitrary: fc.constantFrom(...IDS) },
);

const backtestArb: fc.Arbitrary<ProposalBacktest> = fc.record({
  sinceMs: fc.integer({ min: 0, max: 100 }),
  atMs: fc.integer({ min: 100, max: 200 }),
  rows: fc.nat(50),
  fires: fc.nat(5),
  evalErrors: fc.nat(2),
  storeErrors: fc.nat(2),
  firstFires: fc.array(
    fc.record({
      seq: fc.nat(50),
      at: fc.nat(200),
      kind: fc.constant("run_event"),
      type: fc.constant("tool"),
      declaredLevel: fc.constantFrom("annotate" as const, "notify" as const),
      level: fc.constantFrom("annotate" as const, "notify" as const),
      mode: fc.constantFrom("shadow" as const, "active" as const),
      message: fc.constantFrom("x", "édit ✓"),
    }),
    { maxLength: 2 },
  ),
});

const proposalArb: fc.Arbitrary<NewProposal> = fc.record({
  name: fc.constantFrom("no-force-push", "tests-first"),
  fileText: fc.constantFrom('name = "a"\n', "x"),
  on: fc.constantFrom("run_event", "graph_event"),
  level: fc.constantFrom("annotate" as const, "notify" as const),
  contentHash: fc.constantFrom("c1", "c2"),
  expressionHash: fc.constantFrom(...HASHES),
  rationale: fc.constantFrom("because", ""),
  evidence: fc.array(fc.constantFrom("journal:1", "journal:2"), { maxLength: 2 }),
  run: fc.constantFrom(...RUNS),
  backtest: backtestArb,
  at: fc.integer({ min: 0, max: 20 }),
});

/** Mostly the first repo. */
const repoArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(REPOS[0] as string) },
  { weight: 1, arbitrary: fc.constantFrom(...REPOS) },
);

const pullArb = fc.record({
  number: fc.integer({ min: 1, max: 2 }),
  url: fc.constantFrom("https://x/1", "https://x/2"),
});

/** Mostly opened, merged and closed on few pull requests, so changes meet and end one another. */
const changeArb: fc.Arbitrary<ProposalChange> = fc.record({
  id: idArb,
  repo: repoArb,
  state: fc.oneof(
    { weight: 3, arbitrary: fc.constant<ProposalState>("opened") },
    { weight: 2, arbitrary: fc.constantFrom<ProposalState>("merged", "closed") },
    { weight: 2, arbitrary: fc.constantFrom(...PROPOSAL_STATES) },
  ),
  detail: fc.constantFrom("", "merged as #1", "review: no"),
  pull: fc.option(pullArb, { nil: undefined }),
  pullState: fc.option(fc.constantFrom<PullState>("open", "merged", "closed"), { nil: undefined }),
  backtest: fc.option(backtestArb, { nil: undefined }),
  rejection: fc.option(
    fc.record({
      repo: fc.constantFrom(...REPOS),
      expressionHash: fc.constantFrom(...HASHES),
      reason: fc.constantFrom("no", "never"),
      pull: pullArb,
      at: fc.integer({ min: 0, max: 30 }),
    }),
    { nil: undefined },
  ),
  at: fc.integer({ min: 0, max: 30 }),
});

type Op =
  | { readonly op: "insert"; readonly p: NewProposal }
  | { readonly op: "record"; readonly c: ProposalChange }
  | { readonly op: "countByRun"; readonly run: string }
  | { readonly op: "backlog" }
  | { readonly op: "get"; readonly id: string }
  | {
      readonly op: "list";
      readonly state: (typeof PROPOSAL_STATES)[number] | undefined;
      readonly after: number;
      readonly limit: number;
    }
  | { readonly op: "rejection"; readonly repo: string; readonly hash: string }
  | { readonly op: "pull"; readonly repo: string; readonly number: number }
  | { readonly op: "pullsOpenedAfter"; readonly repo: string; readonly at: number };

const w = (weight: number, arbitrary: fc.Arbitrary<Op>) => ({ weight, arbitrary });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  w(
    3,
    proposalArb.map((p) => ({ op: "insert" as const, p })),
  ),
  w(
    4,
    changeArb.map((c) => ({ op: "record" as const, c })),
  ),
  w(1, fc.record({ op: fc.constant("countByRun" as const), run: fc.constantFrom(...RUNS) })),
  w(1, fc.constant({ op: "backlog" as const })),
  w(1, fc.record({ op: fc.constant("get" as const), id: idArb })),
  w(
    2,
    fc.record({
      op: fc.constant("list" as const),
      state: fc.option(fc.constantFrom(...PROPOSAL_STATES), { nil: undefined }),
      after: fc.integer({ min: 0, max: 4 }),
      limit: fc.integer({ min: -1, max: 4 }),
    }),
  ),
  w(
    1,
    fc.record({
      op: fc.constant("rejection" as const),
      repo: fc.constantFrom(...REPOS),
      hash: fc.constantFrom(...HASHES),
    }),
  ),
  w(
    1,
    fc.record({
      op: fc.constant("pull" as const),
      repo: fc.constantFrom(...REPOS),
      number: fc.integer({ min: 1, max: 3 }),
    }),
  ),
  w(
    1,
    fc.record({
      op: fc.constant("pullsOpenedAfter" as const),
      repo: fc.constantFrom(...REPOS),
      at: fc.integer({ min: 0, max: 30 }),
    }),
  ),
);

type Answer = { readonly value: unknown } | { readonly refused: true };

async function answer(call: () => unknown): Promise<Answer> {
  try {
    return { value: await call() };
  } catch {
    return { refused: true };
  }
}

function run(store: ProposalStore | PgProposalStore, o: Op): Promise<Answer> {
  switch (o.op) {
    case "insert":
      return answer(() => store.insert(o.p));
    case "record":
      return answer(() => store.record(o.c));
    case "countByRun":
      return answer(() => store.countByRun(o.run));
    case "backlog":
      return answer(() => store.backlog());
    case "get":
      return answer(() => store.get(o.id));
    case "list":
      return answer(() =>
        store.list(o.state === undefined ? { after: o.after } : { state: o.state, after: o.after }, o.limit),
      );
    case "rejection":
      return answer(() => store.rejection(o.repo, o.hash));
    case "pull":
      return answer(() => store.pull(o.repo, o.number));
    case "pullsOpenedAfter":
      return answer(() => store.pullsOpenedAfter(o.repo, o.at));
  }
}

/** Each table in key order; `untrusted` SQLite's 0/1 as the boolean PostgreSQL holds. */
const TABLES = [
  "SELECT * FROM rule_proposals ORDER BY id",
  "SELECT * FROM rule_proposal_pulls ORDER BY repo, number",
  "SELECT * FROM rule_proposal_rejections ORDER BY repo, expression_hash",
];
const sqliteTables = (db: Db): unknown[][] =>
  TABLES.map((sql) =>
    (db.prepare(sql).all() as Record<string, unknown>[]).map((r) =>
      "untrusted" in r ? { ...r, untrusted: r.untrusted === 1 } : r,
    ),
  );
const pgTables = async (pool: pg.Pool): Promise<unknown[][]> =>
  Promise.all(TABLES.map(async (sql) => (await pool.query(sql)).rows));

describe("PgProposalStore against ProposalStore", () => {
  const stores = tempStores("harness-proposal-contract-");
  let pgStore: OpenedPgStore;

  beforeAll(async () => {
    pgStore = await openFreshPgStore("proposal_contract", 2);
  });
  afterAll(async () => {
    await pgStore?.close();
  });

  it("the same calls give the same ids, answers and tables on both backends", async () => {
    const db = stores.open(stores.storeFile()).db;
    const sqlite = new ProposalStore(db);
    const postgres = new PgProposalStore(pgStore.pool);
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40, size: "medium" }), async (ops) => {
        // SQLite gives an emptied table's rowids from 1 again; the identity is restarted to match.
        db.exec(
          "DELETE FROM rule_proposals; DELETE FROM rule_proposal_pulls; DELETE FROM rule_proposal_rejections",
        );
        await pgStore.pool.query(
          "TRUNCATE rule_proposals, rule_proposal_pulls, rule_proposal_rejections RESTART IDENTITY",
        );
        for (const [i, o] of ops.entries()) {
          const fromSqlite = await run(sqlite, o);
          expect(await run(postgres, o), `call ${i}: ${o.op}`).toEqual(fromSqlite);
        }
        expect(await pgTables(pgStore.pool)).toEqual(sqliteTables(db));
      }),
      { numRuns: runs(60) },
    );
  });

  it("a merged pull request merges the proposals pushed to it with the named one's hash and supersedes the others; a closed one ends them all; on both", async () => {
    const db = stores.open(stores.storeFile()).db;
    const sqlite = new ProposalStore(db);
    const postgres = new PgProposalStore(pgStore.pool);
    await pgStore.pool.query(
      "TRUNCATE rule_proposals, rule_proposal_pulls, rule_proposal_rejections RESTART IDENTITY",
    );
    const backtest: ProposalBacktest = {
      sinceMs: 0,
      atMs: 1,
      rows: 0,
      fires: 0,
      evalErrors: 0,
      storeErrors: 0,
      firstFires: [],
    };
    const base = {
      name: "n",
      fileText: "t",
      on: "run_event",
      level: "notify" as const,
      contentHash: "c",
      rationale: "r",
      evidence: [],
      run: "impl#1",
      backtest,
    };
    const pull = { number: 7, url: "https://x/7" };
    const open = (id: string, at: number): ProposalChange => ({
      id,
      repo: "acme/policy",
      state: "opened",
      detail: "",
      pull,
      pullState: "open",
      backtest: undefined,
      rejection: undefined,
      at,
    });
    for (const store of [sqlite, postgres]) {
      expect(await store.insert({ ...base, expressionHash: "h1", at: 1 })).toBe("p-1");
      expect(await store.insert({ ...base, expressionHash: "h1", at: 2 })).toBe("p-2");
      expect(await store.insert({ ...base, expressionHash: "h2", at: 3 })).toBe("p-3");
      for (const [i, id] of ["p-1", "p-2", "p-3"].entries()) await store.record(open(id, 4 + i));
      await store.record({ ...open("p-1", 10), state: "merged", detail: "merged", pullState: "merged" });
      // Pushed to #8 and closed unmerged: both end, the named one's hash rejected.
      expect(await store.insert({ ...base, expressionHash: "h3", at: 11 })).toBe("p-4");
      expect(await store.insert({ ...base, expressionHash: "h2", at: 12 })).toBe("p-5");
      const eight = { number: 8, url: "https://x/8" };
      for (const id of ["p-4", "p-5"]) await store.record({ ...open(id, 13), pull: eight });
      await store.record({
        ...open("p-4", 14),
        pull: eight,
        state: "closed",
        detail: "review: no",
        pullState: "closed",
        rejection: { repo: "acme/policy", expressionHash: "h3", reason: "no", pull: eight, at: 14 },
      });
    }
    const states = async (store: ProposalStore | PgProposalStore) =>
      (await store.list({ after: 0 }, 10)).map((p) => [p.id, p.state, p.stateDetail, p.updatedAt]);
    expect(await states(postgres)).toEqual([
      ["p-1", "merged", "merged", 10],
      ["p-2", "merged", "merged", 10],
      ["p-3", "closed", "superseded: pull request #7 merged the expression of p-1, not this one", 10],
      ["p-4", "closed", "review: no", 14],
      ["p-5", "closed", "review: no", 14],
    ]);
    expect(await states(postgres)).toEqual(await states(sqlite));
    expect(await pgTables(pgStore.pool)).toEqual(sqliteTables(db));
  });

  it("a change the table refuses writes nothing, its pull request included, on both", async () => {
    const db = stores.open(stores.storeFile()).db;
    const sqlite = new ProposalStore(db);
    const postgres = new PgProposalStore(pgStore.pool);
    await pgStore.pool.query(
      "TRUNCATE rule_proposals, rule_proposal_pulls, rule_proposal_rejections RESTART IDENTITY",
    );
    const backtest: ProposalBacktest = {
      sinceMs: 0,
      atMs: 1,
      rows: 0,
      fires: 0,
      evalErrors: 0,
      storeErrors: 0,
      firstFires: [],
    };
    // A state outside the table's check, which record-proposal.ts never passes: the update after the
    // pull request's upsert is refused, and the upsert must go with it.
    const refused: ProposalChange = {
      id: "p-1",
      repo: "acme/policy",
      state: "reopened" as ProposalState,
      detail: "",
      pull: { number: 3, url: "https://x/3" },
      pullState: "open",
      backtest: undefined,
      rejection: undefined,
      at: 2,
    };
    for (const store of [sqlite, postgres]) {
      await store.insert({
        name: "n",
        fileText: "t",
        on: "run_event",
        level: "notify",
        contentHash: "c",
        expressionHash: "h1",
        rationale: "r",
        evidence: [],
        run: "impl#1",
        backtest,
        at: 1,
      });
      expect(await answer(() => store.record(refused))).toEqual({ refused: true });
      expect(await store.pull("acme/policy", 3)).toBeUndefined();
    }
    expect(await pgTables(pgStore.pool)).toEqual(sqliteTables(db));
  });
});
