/**
 * The same journal and the same decisions on both backends: rows committed to PostgreSQL and then to
 * SQLite with the `at` PostgreSQL gave them (`same-journal.ts`), then stretches of Decisions built from
 * those rows committed through SQLite's `DecisionStore.commit` and PostgreSQL's `PgEvaluatorLog.commit`,
 * and the agent runs' stops inserted alike. A generated plan says which rows fire how often (the first
 * and some others more than ten times, so a fire's place sorts past one digit), which fires annotate, notify, stop,
 * hold or release, and how the stretches are cut.
 */
import fc from "fast-check";
import type { EventKind } from "../../../../src/core/kinds.js";
import type { Fire, FireAction } from "../../../../src/core/outcome.js";
import { holdKey, type StateOp } from "../../../../src/core/state.js";
import { DecisionStore, type Decisions } from "../../../../src/shell/store/decision-store.js";
import { JournalCommits } from "../../../../src/shell/store/journal-commits.js";
import type { OpenedStore } from "../../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { PgEvaluatorLog } from "../../../../src/shell/store/pg/pg-write-ports.js";
import { batchesOf, sameJournal } from "./same-journal.js";

export const HARNESSES = ["impl", "review", "zeta"] as const;
export const RUNS = ["r1", "r2", "r3"] as const;
export const NODES = ["n1", "n2", "n3", "n4"] as const;
export const RULES = ["alpha", "beta", "gamma"] as const;
export const REPO = "forge.example/org/repo";
export const PATHS = ["a.go", "b.go"] as const;
export const hashOf = (rule: string): string => `h-${rule}`;

const rowArb: fc.Arbitrary<PgNewRow> = fc
  .record({
    kind: fc.constantFrom<EventKind>("run_event", "graph_event", "fact_event", "tick"),
    harness: fc.constantFrom(...HARNESSES),
    run: fc.constantFrom(...RUNS),
    tool: fc.constantFrom("Bash", "Edit"),
    path: fc.constantFrom(...PATHS),
    from: fc.constantFrom<string | number>(...NODES, 7),
    to: fc.constantFrom(...NODES),
  })
  .map(({ kind, harness, run, tool, path, from, to }) => ({
    kind,
    source: kind === "tick" ? "tick" : "observer",
    event:
      kind === "run_event"
        ? { type: "tool_used", harness, run, tool, digest: `d-${tool}`, repo: REPO, paths: [path] }
        : kind === "graph_event"
          ? { type: "edge_added", harness, run, from, to, repo: REPO }
          : kind === "fact_event"
            ? { type: "fact_set", harness, subject: from, value: to }
            : { type: "tick" },
  }));

const fireSpec = fc.record({
  rule: fc.constantFrom(...RULES),
  mode: fc.constantFrom("active", "active", "shadow"),
  annotate: fc.option(fc.constantFrom(...NODES), { nil: undefined }),
  notify: fc.boolean(),
  stop: fc.boolean(),
  hold: fc.boolean(),
  release: fc.option(fc.constantFrom("operator", "reload", "condition_cleared"), { nil: undefined }),
  falseSince: fc.boolean(),
  suppressed: fc.nat(3),
});
type FireSpec = typeof fireSpec extends fc.Arbitrary<infer T> ? T : never;

export interface Plan {
  readonly rows: readonly PgNewRow[];
  readonly batches: readonly number[];
  readonly fires: readonly (readonly FireSpec[])[];
  readonly stretches: readonly number[];
  /** Runs whose loop the guard stopped (agent_run_stops, by loop_guard), delivered or not. */
  readonly loopStops: readonly { readonly run: string; readonly delivered: boolean }[];
  /** Per stop action (in fire order), whether its hook-fed run's stop has been delivered. */
  readonly ruleStops: readonly boolean[];
}

export const planArb: fc.Arbitrary<Plan> = fc.record({
  rows: fc.array(rowArb, { minLength: 4, maxLength: 60 }),
  batches: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }),
  // The first row always fires more than ten times (the reads look at it), others now and then.
  fires: fc
    .tuple(
      fc.array(fireSpec, { minLength: 11, maxLength: 13 }),
      fc.array(
        fc.oneof(
          { weight: 6, arbitrary: fc.array(fireSpec, { maxLength: 3 }) },
          { weight: 1, arbitrary: fc.array(fireSpec, { minLength: 11, maxLength: 13 }) },
        ),
        { minLength: 3, maxLength: 59 },
      ),
    )
    .map(([first, rest]) => [first, ...rest]),
  stretches: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
  loopStops: fc.uniqueArray(fc.record({ run: fc.constantFrom(...RUNS), delivered: fc.boolean() }), {
    selector: (s) => s.run,
    maxLength: 2,
  }),
  ruleStops: fc.array(fc.boolean(), { minLength: 2, maxLength: 20 }),
});

/** A committed row as the decisions see it. */
export interface StoredRow {
  readonly seq: number;
  readonly at: number;
  readonly row: PgNewRow;
}

export interface Populated {
  readonly rows: readonly StoredRow[];
  readonly fires: readonly Fire[];
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Each row's fires and state ops, the holds in force followed across rows. */
function decide(rows: readonly StoredRow[], plan: Plan) {
  const active = new Map<string, string>();
  return rows.map(({ seq, at, row }, r) => {
    const ops: { at: number; op: StateOp }[] = [];
    const fires: Fire[] = [];
    const suppressed = new Map<string, { hash: string; rule: string; n: number }>();
    const harness = str(row.event.harness);
    const run = str(row.event.run);
    for (const [i, spec] of (plan.fires[r] ?? []).entries()) {
      const id = `f-${seq}-${i}`;
      const hash = hashOf(spec.rule);
      const actions: FireAction[] = [];
      if (spec.mode === "active") {
        if (spec.annotate !== undefined) actions.push({ kind: "annotate", node: spec.annotate });
        if (spec.notify) actions.push({ kind: "notify" });
        if (spec.stop && harness !== undefined && run !== undefined)
          actions.push({ kind: "stop", harness, run });
      }
      fires.push({
        id,
        rule: spec.rule,
        hash,
        seq,
        at,
        kind: row.kind,
        type: row.event.type,
        target: harness === undefined ? undefined : { kind: "harness", key: harness, harness, run },
        declaredLevel: "stop",
        effectiveLevel: spec.mode === "active" ? "stop" : "annotate",
        mode: spec.mode as Fire["mode"],
        action: actions[actions.length - 1]?.kind ?? "none",
        actions,
        message: `${spec.rule} fired on ${seq}`,
        primitives: [],
      });
      if (spec.suppressed > 0) {
        const prev = suppressed.get(hash)?.n ?? 0;
        suppressed.set(hash, { hash, rule: spec.rule, n: prev + spec.suppressed });
      }
      if (harness === undefined) continue;
      const key = holdKey(harness, spec.rule);
      if (spec.release !== undefined && active.has(key)) {
        const by = spec.release === "operator" ? "ops" : undefined;
        ops.push({
          at,
          op: { op: "release", key, cause: spec.release as "operator", ...(by ? { by } : {}) },
        });
        active.delete(key);
      } else if (spec.falseSince && active.has(key))
        ops.push({ at, op: { op: "hold_false_since", key, at: spec.mode === "active" ? at : undefined } });
      if (spec.hold && !active.has(key)) {
        active.set(key, id);
        ops.push({
          at,
          op: {
            op: "hold",
            key,
            hold: {
              rule: spec.rule,
              hash,
              harness,
              fireId: id,
              since: at,
              cooldown: 60_000,
              event: row.event,
            },
          },
        });
      }
      if (spec.mode === "shadow")
        ops.push({
          at,
          op: spec.falseSince ? { op: "shadow_completed", hash } : { op: "shadow_since", hash, since: at },
        });
    }
    return { seq, ops, fires, suppressed };
  });
}

/** Commits the plan's journal, decisions and stops to both stores; what was committed. */
export async function populate(sqlite: OpenedStore, pg: OpenedPgStore, plan: Plan): Promise<Populated> {
  const journal = new PgJournal(pg.pool);
  const batches = batchesOf(plan.rows, plan.batches);
  const ats = await sameJournal(journal, new JournalCommits(sqlite.db), batches);
  const rows: StoredRow[] = [];
  batches.forEach((batch, b) => {
    for (const row of batch) rows.push({ seq: rows.length + 1, at: ats[b] as number, row });
  });
  const decided = decide(rows, plan);
  const sqliteStore = new DecisionStore(sqlite.db);
  const pgLog = new PgEvaluatorLog(pg.pool, journal);
  for (const stretch of batchesOf(decided, plan.stretches)) {
    const suppressed = new Map<string, { hash: string; rule: string; n: number }>();
    for (const d of stretch)
      for (const [k, s] of d.suppressed) {
        const prev = suppressed.get(k)?.n ?? 0;
        suppressed.set(k, { ...s, n: prev + s.n });
      }
    const decisions: Decisions = {
      cursor: (stretch[stretch.length - 1] as { seq: number }).seq,
      ops: stretch.flatMap((d) => d.ops),
      fires: stretch.flatMap((d) => d.fires),
      suppressed,
    };
    sqliteStore.commit(decisions);
    await pgLog.commit(decisions);
  }
  const fires = decided.flatMap((d) => d.fires);
  for (const { run, delivered } of plan.loopStops) {
    const values = [run, "impl", `journal:${rows.length}`, rows[0]?.at ?? 0, delivered ? 1 : null];
    sqlite.db
      .prepare(
        "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at, delivered_at) VALUES (?, ?, 'loop_guard', ?, 'loop_guard', ?, ?)",
      )
      .run(...values);
    await pg.pool.query(
      "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at, delivered_at) VALUES ($1, $2, 'loop_guard', $3, 'loop_guard', $4, $5)",
      values,
    );
  }
  const stops = fires.filter((f) => f.actions.some((a) => a.kind === "stop"));
  for (const [i, delivered] of plan.ruleStops.entries()) {
    const fire = stops[i];
    if (fire === undefined) break;
    const values = [`hook-${i}`, "impl", fire.rule, fire.id, fire.at, delivered ? fire.at : null];
    sqlite.db
      .prepare(
        "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at, delivered_at) VALUES (?, ?, ?, ?, 'rule', ?, ?)",
      )
      .run(...values);
    await pg.pool.query(
      "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at, delivered_at) VALUES ($1, $2, $3, $4, 'rule', $5, $6)",
      values,
    );
  }
  return { rows, fires };
}

/** Every row of `table` on both backends, in `order`, booleans and blobs as SQLite reads them. */
export async function tableOnBoth(
  sqlite: OpenedStore,
  pg: OpenedPgStore,
  table: string,
  order: string,
): Promise<{ sqlite: unknown[]; pg: unknown[] }> {
  const sql = `SELECT * FROM ${table} ORDER BY ${order}`;
  const asSqlite = (r: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "boolean" ? (v ? 1 : 0) : v]));
  return {
    sqlite: sqlite.db.prepare(sql).all(),
    pg: (await pg.pool.query(sql)).rows.map(asSqlite),
  };
}
