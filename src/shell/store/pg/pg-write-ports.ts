/**
 * The write path's doors (`../write-ports.ts`) on PostgreSQL: the journal writer's commits through the
 * journal's head (`pg-journal.ts`, decision 0019), the rows' `at` the database's; derived rows' writes
 * in the same transaction, by the store objects that own their tables; and the evaluator's decisions, each stretch in one transaction. A commit that
 * need not wait for the disk turns `synchronous_commit` off for its transaction alone, PostgreSQL's
 * counterpart of SQLite's `synchronous = NORMAL` (`../wal-sync.ts`): durable against a crash of the
 * server process, not yet against a power cut, and made durable by the next commit that waits.
 */
import type pg from "pg";
import type { EventFields, JournalRow } from "../../../core/journal.js";
import type { EventKind } from "../../../core/kinds.js";
import type { CoreState, Hold, StateOp } from "../../../core/state.js";
import { cooldownKey, holdKey } from "../../../core/state.js";
import { type Decisions, type HoldRow, storedPrimitive, toHold } from "../decision-store.js";
import type { NewRow } from "../journal-table.js";
import {
  type CommitOptions,
  type DerivedWrite,
  type EvaluatorLog,
  type GroupResult,
  type JournalLog,
  type PendingGroup,
  StopSettledError,
} from "../write-ports.js";
import { PgAgentRunStops } from "./pg-agent-run-stops.js";
import { inTransaction } from "./pg-client.js";
import { type PgFence, pgReadShadows } from "./pg-decision-store.js";
import { PgDerivedCursors } from "./pg-derived-cursors.js";
import { PgJournal, type PgJournalOptions } from "./pg-journal.js";
import { PgTokenStore } from "./pg-token-store.js";

/** Rows read per page when the windows are rebuilt. */
const PAGE = 5_000;

export class PgJournalLog implements JournalLog {
  private readonly journal: PgJournal;
  private readonly cursors: PgDerivedCursors;
  private readonly stops: PgAgentRunStops;
  private readonly tokens: PgTokenStore;

  constructor(
    pool: pg.Pool,
    options: PgJournalOptions = {},
    private readonly fence: PgFence = async () => {},
  ) {
    this.journal = new PgJournal(pool, options);
    this.cursors = new PgDerivedCursors(pool);
    this.stops = new PgAgentRunStops(pool);
    this.tokens = new PgTokenStore(pool);
  }

  last(): Promise<{ readonly seq: number; readonly at: number }> {
    return this.journal.last();
  }

  answer(source: string, key: string): Promise<string | undefined> {
    return this.journal.answer(source, key);
  }

  /** `at` is the database's clock, not the one given (decision 0019). */
  async commitGroups(
    groups: readonly PendingGroup[],
    _at: number,
    options: CommitOptions = {},
  ): Promise<readonly GroupResult[]> {
    return (await this.journal.commit(groups, options)).results;
  }

  /** The rows' `at` is the database's clock; `writes` carry their own times. */
  async commitRows(
    rows: readonly NewRow[],
    writes: readonly DerivedWrite[] = [],
    options: CommitOptions = {},
  ): Promise<readonly number[]> {
    const { results } = await this.journal.commit(
      rows.length === 0 ? [] : [{ rows: rows.map(({ at: _, ...row }) => row) }],
      {
        ...options,
        extra: async (client, seqs) => {
          // After the head's lock, as every fenced commit takes the two: head, then lease.
          if (options.fenced === true) await this.fence(client);
          for (const w of writes) await this.write(client, w, seqs);
        },
      },
    );
    const first = results[0];
    return first?.kind === "committed" ? first.seqs : [];
  }

  /** One derived row's write, inside the append transaction (SQLite's `SqliteJournalLog.write`). */
  private async write(client: pg.PoolClient, w: DerivedWrite, seqs: readonly number[]): Promise<void> {
    switch (w.kind) {
      case "cursor":
        return this.cursors.set(w.name, w.seq, client);
      case "loop_guard_stop": {
        const loopSeq = seqs[w.row];
        if (loopSeq === undefined)
          throw new Error(`journal: a loop guard stop names row ${w.row} of ${seqs.length}`);
        return this.stops.loopGuardStop({ run: w.run, harness: w.harness, loopSeq, at: w.at }, client);
      }
      case "stop_closed_first":
        return this.stops.closedFirst(w.run, w.at, client);
      case "stop_delivered":
        // A conditional update: a stop another call (another daemon) delivered first is not closed twice.
        if (!(await this.stops.delivered(w.stop, w.at, client))) throw new StopSettledError(w.stop.run);
        return;
      case "run_tokens_revoked":
        return this.tokens.revokeGatewayOfRun(w.run, w.at, client);
    }
  }
}

interface StoredRow {
  seq: number;
  kind: EventKind;
  at: number;
  event: string;
}

const toRow = (r: StoredRow): JournalRow => ({
  seq: r.seq,
  at: r.at,
  kind: r.kind,
  event: JSON.parse(r.event) as EventFields,
});

const splitKey = (key: string): [string, string] => {
  const i = key.indexOf("\u0000");
  return [key.slice(0, i), key.slice(i + 1)];
};

export class PgEvaluatorLog implements EvaluatorLog {
  constructor(
    private readonly pool: pg.Pool,
    private readonly journal: PgJournal,
    /** The leader's fence (`pg-lease.ts`): every commit of decisions checks the epoch first. */
    private readonly fence: PgFence = async () => {},
  ) {}

  async cursor(): Promise<number> {
    const r = await this.pool.query<{ cursor: number }>("SELECT cursor FROM evaluator WHERE id = 1");
    return (r.rows[0] as { cursor: number }).cursor;
  }

  /** One snapshot of every table of the core's state. */
  loadState(options: { readonly clearCostExceeded: boolean }): Promise<CoreState> {
    return inTransaction(this.pool, "BEGIN ISOLATION LEVEL REPEATABLE READ", async (client) => {
      if (options.clearCostExceeded) {
        await this.fence(client);
        await client.query("DELETE FROM rule_cost_exceeded");
      }
      const cooldowns: Record<string, CoreState["cooldowns"][string]> = {};
      for (const r of (
        await client.query<{ hash: string; target: string; until: number; fire_id: string }>(
          "SELECT hash, target, until, fire_id FROM rule_cooldowns",
        )
      ).rows)
        cooldowns[cooldownKey(r.hash, r.target)] = { until: r.until, fireId: r.fire_id };
      const shadows = await pgReadShadows(client);
      const holds: Record<string, Hold> = {};
      for (const r of (
        await client.query<HoldRow>(
          "SELECT harness, rule, hash, fire_id, since, cooldown, event, false_since FROM rule_holds WHERE released_at IS NULL ORDER BY id",
        )
      ).rows)
        holds[holdKey(r.harness, r.rule)] = toHold(r);
      const runs: Record<string, string> = {};
      for (const r of (
        await client.query<{ harness: string; run: string }>("SELECT harness, run FROM runs_in_flight")
      ).rows)
        runs[r.harness] = r.run;
      const sessions: Record<string, string> = {};
      for (const r of (
        await client.query<{ run: string; harness: string }>("SELECT run, harness FROM sessions_in_flight")
      ).rows)
        sessions[r.run] = r.harness;
      const costExceeded: Record<string, true> = {};
      for (const r of (await client.query<{ hash: string }>("SELECT hash FROM rule_cost_exceeded")).rows)
        costExceeded[r.hash] = true;
      return { cooldowns, shadows, holds, runs, sessions, costExceeded };
    });
  }

  /** One stretch of decisions and the cursor, in one transaction, each op in its row's order. */
  commit(d: Decisions, options: CommitOptions = {}): Promise<void> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      await this.fence(client);
      if (options.unsynced === true) await client.query("SET LOCAL synchronous_commit = off");
      for (const { at, op } of d.ops) await applyOp(client, at, op);
      for (const fire of d.fires) {
        await client.query({
          name: "decision-fire",
          text: `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run,
                   declared_level, effective_level, mode, action, message, primitives)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
          values: [
            fire.id,
            fire.seq,
            fire.at,
            fire.rule,
            fire.hash,
            fire.kind,
            fire.type,
            fire.target?.kind ?? null,
            fire.target?.key ?? null,
            fire.target?.harness ?? null,
            fire.target?.run ?? null,
            fire.declaredLevel,
            fire.effectiveLevel,
            fire.mode,
            fire.action,
            fire.message,
            JSON.stringify(fire.primitives.map(storedPrimitive)),
          ],
        });
        for (const a of fire.actions) {
          if (a.kind === "annotate")
            await client.query(
              "INSERT INTO rule_annotations (fire_id, node, rule, message, at) VALUES ($1, $2, $3, $4, $5)",
              [fire.id, a.node, fire.rule, fire.message, fire.at],
            );
          else if (a.kind === "notify" || a.kind === "stop")
            await client.query(
              "INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES ($1, $2, 'pending', $3)",
              [fire.id, a.kind, fire.at],
            );
        }
      }
      for (const { hash, rule, n } of d.suppressed.values())
        await client.query(
          "INSERT INTO rule_suppressed (hash, rule, count) VALUES ($1, $2, $3) ON CONFLICT (hash, rule) DO UPDATE SET count = rule_suppressed.count + excluded.count",
          [hash, rule, n],
        );
      await client.query({
        name: "decision-cursor",
        text: "UPDATE evaluator SET cursor = $1 WHERE id = 1",
        values: [d.cursor],
      });
    });
  }

  async rowsAfter(seq: number, limit: number): Promise<readonly JournalRow[]> {
    return this.journal.rowsAfter(seq, limit);
  }

  async *pagesBetween(afterAt: number, fromSeq: number, toSeq: number): AsyncIterable<readonly JournalRow[]> {
    let from = fromSeq;
    for (;;) {
      const r = await this.pool.query<StoredRow>(
        "SELECT seq, kind, at, event FROM rule_journal WHERE at > $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        [afterAt, from, toSeq, PAGE],
      );
      if (r.rows.length > 0) yield r.rows.map(toRow);
      if (r.rows.length < PAGE) return;
      from = (r.rows[r.rows.length - 1] as StoredRow).seq;
    }
  }

  atOf(seq: number): Promise<number | undefined> {
    return this.journal.atOf(seq);
  }
}

/** One state op (SQLite's `DecisionStore.applyOp`). */
async function applyOp(client: pg.PoolClient, at: number, op: StateOp): Promise<void> {
  switch (op.op) {
    case "shadow_since":
      await client.query(
        "INSERT INTO rule_shadows (hash, since, completed) VALUES ($1, $2, false) ON CONFLICT (hash) DO UPDATE SET since = excluded.since, completed = false",
        [op.hash, op.since],
      );
      return;
    case "shadow_completed":
      await client.query(
        "INSERT INTO rule_shadows (hash, since, completed) VALUES ($1, 0, true) ON CONFLICT (hash) DO UPDATE SET completed = true",
        [op.hash],
      );
      return;
    case "cooldown": {
      const [hash, target] = splitKey(op.key);
      await client.query(
        "INSERT INTO rule_cooldowns (hash, target, until, fire_id) VALUES ($1, $2, $3, $4) ON CONFLICT (hash, target) DO UPDATE SET until = excluded.until, fire_id = excluded.fire_id",
        [hash, target, op.entry.until, op.entry.fireId],
      );
      return;
    }
    case "cooldown_expired": {
      const [hash, target] = splitKey(op.key);
      await client.query("DELETE FROM rule_cooldowns WHERE hash = $1 AND target = $2", [hash, target]);
      return;
    }
    case "hold": {
      const h = op.hold;
      await client.query(
        "INSERT INTO rule_holds (harness, rule, hash, fire_id, since, cooldown, event) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [h.harness, h.rule, h.hash, h.fireId, h.since, h.cooldown, JSON.stringify(h.event)],
      );
      return;
    }
    case "hold_false_since": {
      const [harness, rule] = splitKey(op.key);
      await client.query(
        "UPDATE rule_holds SET false_since = $1 WHERE harness = $2 AND rule = $3 AND released_at IS NULL",
        [op.at ?? null, harness, rule],
      );
      return;
    }
    case "release": {
      const [harness, rule] = splitKey(op.key);
      await client.query(
        "UPDATE rule_holds SET released_at = $1, release_cause = $2, released_by = $3 WHERE harness = $4 AND rule = $5 AND released_at IS NULL",
        [at, op.cause, op.by ?? null, harness, rule],
      );
      return;
    }
    case "run_in_flight":
      if (op.run === undefined)
        await client.query("DELETE FROM runs_in_flight WHERE harness = $1", [op.harness]);
      else
        await client.query(
          "INSERT INTO runs_in_flight (harness, run) VALUES ($1, $2) ON CONFLICT (harness) DO UPDATE SET run = excluded.run",
          [op.harness, op.run],
        );
      return;
    case "session_in_flight":
      if (op.harness === undefined)
        await client.query("DELETE FROM sessions_in_flight WHERE run = $1", [op.run]);
      else
        await client.query(
          "INSERT INTO sessions_in_flight (run, harness) VALUES ($1, $2) ON CONFLICT (run) DO UPDATE SET harness = excluded.harness",
          [op.run, op.harness],
        );
      return;
    case "cost_exceeded":
      await client.query("INSERT INTO rule_cost_exceeded (hash) VALUES ($1) ON CONFLICT (hash) DO NOTHING", [
        op.hash,
      ]);
      return;
  }
}
