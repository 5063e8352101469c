/**
 * Issue 34: what commits with derived rows (decision 0020's `DerivedWrite`) does on PostgreSQL what it
 * does on SQLite, in the transaction of the rows: a deriver's cursor, the loop guard's stop naming its
 * row's seq, a rule's stop settled (delivered, or closed first) with its action summed up, a closed
 * run's gateway tokens revoked; and a commit that fails leaves none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournalLog } from "../../../../src/shell/store/pg/pg-write-ports.js";
import { StopSettledError } from "../../../../src/shell/store/write-ports.js";
import { openFreshPgStore } from "./pg-store.js";

let store: OpenedPgStore;
beforeAll(async () => {
  store = await openFreshPgStore("derived_writes", 2);
});
afterAll(async () => {
  await store.close();
});

const row = (type: string, run: string) => ({
  kind: "run_event" as const,
  source: "loopguard" as const,
  at: 0,
  event: { type, harness: "impl", run },
});

const one = async <T>(text: string, values: unknown[] = []): Promise<T | undefined> =>
  (await store.pool.query(text, values)).rows[0] as T | undefined;

describe("derived rows' writes on PostgreSQL", () => {
  it("commit with their rows: the cursor, the loop guard's stop naming its row, a closed run's tokens revoked", async () => {
    const log = new PgJournalLog(store.pool);
    await store.pool.query(
      "INSERT INTO issued_tokens (id, kind, digest, created_at, run) VALUES ('g1', 'gateway', '\\x00', 1, 'impl#1'), ('g2', 'gateway', '\\x01', 1, 'impl#2')",
    );
    const seqs = await log.commitRows(
      [row("tool", "impl#1"), row("loop_stopped", "impl#1")],
      [
        { kind: "loop_guard_stop", run: "impl#1", harness: "impl", at: 5, row: 1 },
        { kind: "run_tokens_revoked", run: "impl#1", at: 6 },
        { kind: "cursor", name: "loop-guard", seq: 9 },
      ],
    );
    expect(seqs).toEqual([1, 2]);
    expect(await one("SELECT run, rule, fire_id, by, created_at FROM agent_run_stops")).toEqual({
      run: "impl#1",
      rule: "loop-guard",
      fire_id: "journal:2",
      by: "loop_guard",
      created_at: 5,
    });
    expect((await store.pool.query("SELECT id, revoked_at FROM issued_tokens ORDER BY id")).rows).toEqual([
      { id: "g1", revoked_at: 6 },
      { id: "g2", revoked_at: null },
    ]);
    expect(await one("SELECT cursor FROM derived_cursors WHERE name = 'loop-guard'")).toEqual({ cursor: 9 });
    // A cursor alone commits with no row.
    expect(await log.commitRows([], [{ kind: "cursor", name: "loop-guard", seq: 12 }])).toEqual([]);
    expect(await one("SELECT cursor FROM derived_cursors WHERE name = 'loop-guard'")).toEqual({ cursor: 12 });
  });

  it("settle a rule's stop once, summing its action up: delivered to one run, closed first by the other", async () => {
    const log = new PgJournalLog(store.pool);
    await store.pool.query(
      `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, declared_level, effective_level, mode, action, message, primitives)
       VALUES ('f1', 1, 1, 'r', 'h', 'run_event', 'tool', 'stop', 'stop', 'active', 'stop', 'm', '[]')`,
    );
    await store.pool.query(
      "INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES ('f1', 'stop', 'started', 1)",
    );
    await store.pool.query(
      "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at) VALUES ('impl#a', 'impl', 'r', 'f1', 'rule', 1), ('impl#b', 'impl', 'r', 'f1', 'rule', 1)",
    );
    const stop = {
      run: "impl#a",
      harness: "impl",
      rule: "r",
      fireId: "f1",
      by: "rule" as const,
      deliveredAt: undefined,
      releasedAt: undefined,
    };
    await log.commitRows([row("closed", "impl#a")], [{ kind: "stop_delivered", stop, at: 7 }]);
    expect(await one("SELECT state FROM rule_actions WHERE fire_id = 'f1'")).toEqual({ state: "started" });
    await log.commitRows([], [{ kind: "stop_closed_first", run: "impl#b", at: 8 }]);
    // Settled once: a second delivery (another call of the run, on any daemon) is refused with its
    // closed row, so the run is closed once.
    const head = await one<{ seq: number }>("SELECT seq FROM journal_head");
    await expect(
      log.commitRows([row("closed", "impl#a")], [{ kind: "stop_delivered", stop, at: 9 }]),
    ).rejects.toBeInstanceOf(StopSettledError);
    expect(await one("SELECT seq FROM journal_head")).toEqual(head);
    expect(await one("SELECT state, detail, updated_at FROM rule_actions WHERE fire_id = 'f1'")).toEqual({
      state: "ok",
      detail: "delivered to impl#a at its next hook call; impl#b closed before its next hook call",
      updated_at: 8,
    });
    expect(
      (
        await store.pool.query(
          "SELECT run, delivered_at, outcome FROM agent_run_stops WHERE fire_id = 'f1' ORDER BY run",
        )
      ).rows,
    ).toEqual([
      { run: "impl#a", delivered_at: 7, outcome: "delivered" },
      { run: "impl#b", delivered_at: 8, outcome: "closed_first" },
    ]);
  });

  it("leave nothing when the commit fails", async () => {
    const log = new PgJournalLog(store.pool);
    const before = await one<{ seq: number }>("SELECT seq FROM journal_head");
    await expect(
      log.commitRows(
        [row("tool", "impl#9")],
        [
          { kind: "cursor", name: "stale-runs", seq: 40 },
          // Names a row the commit does not have: the transaction rolls back.
          { kind: "loop_guard_stop", run: "impl#9", harness: "impl", at: 1, row: 3 },
        ],
      ),
    ).rejects.toThrow(/names row 3 of 1/);
    expect(await one("SELECT seq FROM journal_head")).toEqual(before);
    expect(await one("SELECT cursor FROM derived_cursors WHERE name = 'stale-runs'")).toBeUndefined();
  });
});
