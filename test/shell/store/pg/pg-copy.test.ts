/**
 * `harness store copy`'s store side (src/shell/store/pg/pg-copy.ts): a SQLite store with rows in every
 * table moves into an empty PostgreSQL database whole, every row equal on both sides (read here apart
 * from the copy's own verification), and the journal's next append continues its order; a database
 * that holds anything is refused, naming what it holds; a copy that fails midway leaves nothing.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventFields } from "../../../../src/core/journal.js";
import { JournalTable, type NewRow } from "../../../../src/shell/store/journal-table.js";
import { type Db, openStore, openStoreReadOnly } from "../../../../src/shell/store/open-store.js";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { copyStore, StoreCopyError } from "../../../../src/shell/store/pg/pg-copy.js";
import { PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { STORE_TABLES, tableRows, tableShape } from "../../../../src/shell/store/store-tables.js";
import { runs, runsTimeout } from "../../../property-runs.js";
import { pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase } from "./pg-store.js";

/** Journal row `i`: tool rows (errors, paths, a peer), graph and fact rows, ticks, unicode. */
function journalRow(i: number, at: number): NewRow {
  const base = { at, source: "observer" as const };
  switch (i % 4) {
    case 0:
      return {
        ...base,
        kind: "run_event",
        event: {
          type: "tool",
          harness: `h${i % 3}`,
          run: `h${i % 3}#${i % 5}`,
          tool: i % 2 === 0 ? "Bash" : "Edit",
          is_error: i % 3 === 0,
          ...(i % 8 === 0 ? { paths: [`src/${i}.ts`, `tést/ü${i}.ts`] } : {}),
        } as EventFields,
        ...(i % 16 === 0 ? { peer: { name: "ci-runner", fingerprint: "ab".repeat(32) } } : {}),
      };
    case 1:
      return {
        ...base,
        kind: "graph_event",
        source: "graph",
        event: {
          type: "edge",
          edge: "imports",
          from: `a${i}`,
          to: `b${i}`,
          path: `src/${i}.ts`,
        } as EventFields,
      };
    case 2:
      return {
        ...base,
        kind: "fact_event",
        source: "facts",
        event: { type: "fact", predicate: "owner", subject: `s${i}`, value: i } as EventFields,
      };
    default:
      return { ...base, kind: "tick", source: "tick", event: { type: "tick" } as EventFields };
  }
}

/** `n` journal rows, `at` non-decreasing from `start`, as the writer stamps them. */
function appendJournal(db: Db, n: number, start = 1_700_000_000_000): void {
  const journal = new JournalTable(db);
  db.transaction(() => {
    for (let i = 0; i < n; i++) journal.append(journalRow(i, start + Math.floor(i / 3)));
  })();
}

/**
 * A row in every other table, with what a copy could get wrong: NULLs, flags, a blob, text keys whose
 * byte order is not a dictionary's ("B" < "a" < "é"), an integer past 2^53, ids with gaps.
 */
function fillDecisions(db: Db): void {
  const fires = ["fire-B", "fire-a", "fire-é", "fire-1"];
  db.transaction(() => {
    db.prepare("UPDATE evaluator SET cursor = ?").run(40);
    const fire = db.prepare(
      `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run,
         declared_level, effective_level, mode, action, message, primitives)
       VALUES (?, ?, ?, 'no-force-push', 'h1', 'run_event', 'tool', ?, ?, ?, ?, 'hold', 'hold', 'active', 'hold', ?, '{}')`,
    );
    fires.forEach((id, i) => {
      fire.run(
        id,
        i + 1,
        1_700_000_000_000 + i,
        i === 0 ? null : "run",
        i === 0 ? null : `h0#${i}`,
        i === 3 ? null : "h0",
        `h0#${i}`,
        `message ✓ ${i}\n"quoted"`,
      );
    });
    const action = db.prepare(
      "INSERT INTO rule_actions (fire_id, action, state, detail, updated_at) VALUES (?, ?, ?, ?, ?)",
    );
    action.run("fire-B", "notify", "delivered", null, 1);
    action.run("fire-B", "hold", "undelivered", "restart", 2);
    action.run("fire-é", "stop", "pending", "", 3);
    db.prepare("INSERT INTO rule_annotations (fire_id, node, rule, message, at) VALUES (?, ?, ?, ?, ?)").run(
      "fire-a",
      "src/x.ts",
      "r",
      "m",
      5,
    );
    const hold = db.prepare(
      `INSERT INTO rule_holds (id, harness, rule, hash, fire_id, since, cooldown, event, false_since, released_at, release_cause, released_by)
       VALUES (?, ?, 'no-force-push', 'h1', 'fire-B', 10, 60000, '{}', ?, ?, ?, ?)`,
    );
    hold.run(3, "h0", null, null, null, null);
    hold.run(7, "h1", 11, 12, "cleared", "operator");
    db.prepare("INSERT INTO rule_cooldowns (hash, target, until, fire_id) VALUES (?, ?, ?, ?)").run(
      "h1",
      "h0",
      9_007_199_254_740_993n,
      "fire-B",
    );
    const shadow = db.prepare("INSERT INTO rule_shadows (hash, since, completed) VALUES (?, ?, ?)");
    shadow.run("s-done", 0, 1);
    shadow.run("s-open", 100, 0);
    db.prepare("INSERT INTO rule_suppressed (hash, rule, count) VALUES ('h1', 'r', 12)").run();
    db.prepare("INSERT INTO runs_in_flight (harness, run) VALUES ('h0', 'h0#1')").run();
    db.prepare("INSERT INTO rule_cost_exceeded (hash) VALUES ('h9')").run();
    db.prepare(
      "INSERT INTO policy_last_good (repo, branch, commit_oid, loaded_at) VALUES ('policy', 'main', 'abc', 1)",
    ).run();
    const proposal = db.prepare(
      `INSERT INTO rule_proposals (id, name, file_text, on_kind, level, content_hash, expression_hash, rationale,
         evidence, run, untrusted, state, state_detail, policy_repo, pr_number, backtest, created_at, updated_at)
       VALUES (?, ?, 'when = "true"', 'run_event', 'notify', 'c', ?, 'why', '[]', 'miner#1', ?, ?, '', ?, ?, '{}', 1, 2)`,
    );
    proposal.run(2, "p-two", "e2", 1, "stored", null, null);
    proposal.run(5, "p-five", "e5", 0, "opened", "policy", 17);
    db.prepare(
      "INSERT INTO rule_proposal_pulls (repo, number, url, state, opened_at) VALUES ('policy', 17, 'https://x/17', 'open', 3)",
    ).run();
    db.prepare(
      `INSERT INTO rule_proposal_rejections (repo, expression_hash, reason, pr_number, pr_url, rejected_at)
       VALUES ('policy', 'e1', 'no', 16, 'https://x/16', 4)`,
    ).run();
    db.prepare(
      "INSERT INTO notify_cooldowns (harness, event, rule, sent_at) VALUES ('h0', 'fired', 'r', 6)",
    ).run();
    db.prepare(
      "INSERT INTO journal_appends (source, key, answer, created_at) VALUES ('observer', 'k1', '{\"seqs\":[1]}', 7)",
    ).run();
    const token = db.prepare(
      `INSERT INTO issued_tokens (id, digest, kind, source, harness, run, label, created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 8, ?, ?)`,
    );
    token.run(
      "t1",
      Buffer.from([0, 1, 2, 255, 92, 120]),
      "producer",
      "observer",
      null,
      null,
      "ci",
      null,
      null,
    );
    token.run("t2", Buffer.alloc(32, 7), "gateway", null, "h0", "h0#1", null, 9, 10);
    db.prepare("INSERT INTO sessions_in_flight (run, harness) VALUES ('h0#1', 'h0')").run();
    const stop = db.prepare(
      `INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at, delivered_at, outcome, released_at, released_by)
       VALUES (?, 'h0', 'r', 'fire-B', ?, 11, ?, ?, ?, ?)`,
    );
    stop.run("h0#1", "rule", null, null, null, null);
    stop.run("h0#2", "loop_guard", 12, "delivered", 13, "operator");
    db.prepare(
      "INSERT INTO derived_cursors (name, cursor) VALUES ('loop_guard', 38), ('stale_runs', 0)",
    ).run();
    db.prepare("INSERT INTO agent_told (run, fire_id, seq, told_at) VALUES ('h0#1', 'fire-B', 1, 14)").run();
    db.prepare(
      "INSERT INTO agent_session_runs (run, harness, session, generation, created_at) VALUES ('h0#s~2', 'h0', 's', 2, 15)",
    ).run();
  })();
}

/** Every table's rows as the copy's own reader gives them, as plain values to compare. */
function sqliteTables(file: string): Record<string, unknown[][]> {
  const store = openStoreReadOnly(file);
  try {
    return Object.fromEntries(
      STORE_TABLES.map((t) => [t, [...tableRows(store.db, tableShape(store.db, t), 100)].map(plain)]),
    );
  } finally {
    store.close();
  }
}

/** A cell as a value both sides give alike: integers as decimal text, flags as 0/1, blobs as hex. */
const plain = (row: readonly unknown[]): unknown[] =>
  row.map((c) =>
    typeof c === "bigint" || typeof c === "number"
      ? String(c)
      : typeof c === "boolean"
        ? c
          ? "1"
          : "0"
        : Buffer.isBuffer(c)
          ? c.toString("hex")
          : c,
  );

/** SQLite's key order over the key's columns `keyAt`: integers by value, text by its UTF-8 bytes. */
function byKey(
  keyAt: readonly { index: number; integer: boolean }[],
): (a: unknown[], b: unknown[]) => number {
  return (a, b) => {
    for (const { index, integer } of keyAt) {
      const x = String(a[index]);
      const y = String(b[index]);
      const d = integer ? Number(BigInt(x) - BigInt(y)) : Buffer.compare(Buffer.from(x), Buffer.from(y));
      if (d !== 0) return Math.sign(d);
    }
    return 0;
  };
}

/** Every table's rows on PostgreSQL, read apart from the copy and put in SQLite's key order here. */
async function postgresTables(options: pg.ClientConfig, file: string): Promise<Record<string, unknown[][]>> {
  const store = openStoreReadOnly(file);
  const client = new pg.Client({
    ...options,
    types: {
      getTypeParser: ((oid: number) =>
        oid === 20 ? (v: string) => v : pg.types.getTypeParser(oid)) as typeof pg.types.getTypeParser,
    },
  });
  await client.connect();
  try {
    const out: Record<string, unknown[][]> = {};
    for (const t of STORE_TABLES) {
      const shape = tableShape(store.db, t);
      const r = await client.query<unknown[]>({
        text: `SELECT ${shape.columns.join(", ")} FROM ${t}`,
        rowMode: "array",
      });
      const keyAt = shape.key.map((k) => {
        const index = shape.columns.indexOf(k);
        return { index, integer: [20, 23].includes(r.fields[index]?.dataTypeID ?? 0) };
      });
      out[t] = r.rows.sort(byKey(keyAt)).map(plain);
    }
    return out;
  } finally {
    await client.end();
    store.close();
  }
}

describe("harness store copy, SQLite to PostgreSQL", () => {
  let target: pg.ClientConfig;
  let file: string;

  let dir: string;

  beforeAll(async () => {
    target = pgOptions(await freshPgDatabase("store_copy"));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-copy-"));
    file = path.join(dir, "harness.db");
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("copies a store with rows in every table whole: every row of every table equal, counts reported", async () => {
    const writer = openStore(file, "store copy test");
    appendJournal(writer.db, 2_345);
    fillDecisions(writer.db);
    // The writer stays open, as a daemon's would: the copy reads on a connection of its own.
    const report = await copyStore(file, target, { page: 100 }).finally(() => writer.close());
    expect(report.mismatch).toBeUndefined();
    const want = sqliteTables(file);
    for (const t of STORE_TABLES) expect(want[t]?.length, `${t} has rows to copy`).toBeGreaterThan(0);
    expect(report.tables.map((c) => [c.table, c.sqlite, c.postgres])).toEqual(
      STORE_TABLES.map((t) => [t, want[t]?.length, want[t]?.length]),
    );
    expect(await postgresTables(target, file)).toEqual(want);
    expect(report.head).toEqual({ seq: 2_345, at: 1_700_000_000_000 + Math.floor(2_344 / 3) });
  });

  it("leaves the journal's head at the last row, so the next append gets seq max + 1 and at >= max at", async () => {
    const opened = await openPgStore(target);
    try {
      const journal = new PgJournal(opened.pool);
      const before = await journal.last();
      const r = await journal.commit([
        { rows: [{ kind: "tick", source: "tick", event: { type: "tick" } as EventFields }] },
      ]);
      expect(r.results).toEqual([{ kind: "committed", seqs: [before.seq + 1] }]);
      expect(r.at).toBeGreaterThanOrEqual(before.at);
      // Identities continue past the copied ids: a new hold and proposal get the next ones.
      const ids = await opened.pool.query<{ hold: number; proposal: number }>(
        `SELECT nextval(pg_get_serial_sequence('rule_holds', 'id')) AS hold,
                nextval(pg_get_serial_sequence('rule_proposals', 'id')) AS proposal`,
      );
      expect(ids.rows[0]).toEqual({ hold: 8, proposal: 6 });
    } finally {
      await opened.close();
    }
  });

  it("refuses a database that holds anything, naming what it holds, and leaves it as it was", async () => {
    const again = copyStore(file, target, { page: 100 });
    await expect(again).rejects.toThrow(StoreCopyError);
    await expect(again).rejects.toThrow(
      /is not empty \(journal_head, rule_journal, rule_journal_paths, evaluator, rule_fires, rule_actions,/,
    );
    const opened = await openPgStore(target);
    try {
      expect(await new PgJournal(opened.pool).last()).toMatchObject({ seq: 2_346 });
    } finally {
      await opened.close();
    }
  });

  it("refuses a database where only a decision table holds a row", async () => {
    const only = pgOptions(await freshPgDatabase("store_copy_held"));
    const opened = await openPgStore(only);
    await opened.pool.query("INSERT INTO rule_cost_exceeded (hash) VALUES ('x')");
    await opened.close();
    await expect(copyStore(file, only)).rejects.toThrow(/is not empty \(rule_cost_exceeded\)/);
  });

  it("a copy that fails midway leaves the database empty, and a copy after it succeeds", async () => {
    const fresh = pgOptions(await freshPgDatabase("store_copy_failed"));
    const failing = copyStore(file, fresh, {
      page: 100,
      afterTable: async (table) => {
        if (table === "rule_holds") throw new Error("failpoint after rule_holds");
      },
    });
    await expect(failing).rejects.toThrow("failpoint after rule_holds");
    const opened = await openPgStore(fresh);
    try {
      const counts = await opened.pool.query<{ n: number }>(
        `SELECT (${STORE_TABLES.filter((t) => t !== "evaluator")
          .map((t) => `(SELECT count(*) FROM ${t})`)
          .join(" + ")})::int AS n`,
      );
      expect(counts.rows[0]?.n).toBe(0);
      const head = await opened.pool.query("SELECT seq, at FROM journal_head");
      expect(head.rows).toEqual([{ seq: 0, at: 0 }]);
      const evaluator = await opened.pool.query("SELECT id, cursor FROM evaluator");
      expect(evaluator.rows).toEqual([{ id: 1, cursor: 0 }]);
      // Nor did it move an identity past ids it never committed: a sequence is not rolled back.
      const next = await opened.pool.query(
        "SELECT nextval(pg_get_serial_sequence('rule_proposals', 'id')) AS id",
      );
      expect(next.rows).toEqual([{ id: 1 }]);
    } finally {
      await opened.close();
    }
    const report = await copyStore(file, fresh);
    expect(report.mismatch).toBeUndefined();
  });

  it("verifies row for row: a row PostgreSQL stores otherwise is reported with its table and first key", async () => {
    // A trigger on the target changes one fire's message as it is inserted: the copy commits, and its
    // verification, reading both sides again, finds that row.
    const fresh = pgOptions(await freshPgDatabase("store_copy_verify"));
    const opened = await openPgStore(fresh);
    await opened.pool.query(`
      CREATE FUNCTION garble() RETURNS trigger AS $$
      BEGIN
        IF NEW.fire_id = 'fire-a' THEN NEW.message := NEW.message || '!'; END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql;
      CREATE TRIGGER garble BEFORE INSERT ON rule_fires FOR EACH ROW EXECUTE FUNCTION garble();`);
    await opened.close();
    const report = await copyStore(file, fresh, { page: 2 });
    expect(report.mismatch).toMatchObject({ table: "rule_fires", key: "fire_id=fire-a" });
    expect(report.mismatch?.postgres).toContain('"quoted\\"!"');
    expect(report.tables.find((t) => t.table === "rule_fires")).toEqual({
      table: "rule_fires",
      sqlite: 4,
      postgres: 4,
    });
  });
});

describe("harness store copy of any journal (property)", () => {
  let target: pg.ClientConfig;
  let emptied: OpenedPgStore;
  let dir: string;

  beforeAll(async () => {
    target = pgOptions(await freshPgDatabase("store_copy_property"));
    emptied = await openPgStore(target);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-copy-property-"));
  });
  afterAll(async () => {
    await emptied?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The database as the migrations leave it, for the next case: every table empty, head and cursor at 0. */
  async function empty(): Promise<void> {
    await emptied.pool.query(
      // Children first, for the foreign keys; DELETE rather than TRUNCATE, which makes new files each time.
      `${[...STORE_TABLES]
        .reverse()
        .map((t) => `DELETE FROM ${t};`)
        .join("\n")}
       INSERT INTO evaluator (id, cursor) VALUES (1, 0);
       UPDATE journal_head SET seq = 0, at = 0`,
    );
  }

  it(
    "copies any generated journal row for row, at any page size, and the head is its last row",
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(
              fc.nat(3),
              fc.nat(5), // kind, the step of `at` (0: the same batch)
              fc.string({ maxLength: 12, unit: "grapheme" }),
              fc.boolean(),
            ),
            {
              maxLength: 60,
            },
          ),
          fc.integer({ min: 1, max: 7 }),
          async (spec, page) => {
            run++;
            const file = path.join(dir, `harness-${run}.db`);
            const writer = openStore(file, "store copy property");
            const journal = new JournalTable(writer.db);
            let at = 1_000;
            writer.db.transaction(() => {
              spec.forEach(([kind, step, text, flag]) => {
                at += step;
                const row = journalRow(kind, at);
                journal.append({
                  ...row,
                  event: {
                    ...row.event,
                    ...(kind === 0 ? { tool: text, is_error: flag } : {}),
                  } as EventFields,
                });
              });
            })();
            writer.close();
            await empty();
            const report = await copyStore(file, target, { page });
            expect(report.mismatch).toBeUndefined();
            expect(report.tables.find((t) => t.table === "rule_journal")).toEqual({
              table: "rule_journal",
              sqlite: spec.length,
              postgres: spec.length,
            });
            expect(await postgresTables(target, file)).toEqual(sqliteTables(file));
            expect(report.head).toEqual({ seq: spec.length, at: spec.length === 0 ? 0 : at });
          },
        ),
        { numRuns: runs(12) },
      );
    },
    runsTimeout(60_000),
  );
});
