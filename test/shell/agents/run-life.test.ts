/**
 * A run's life, once (`agents/enforcement/run-life.ts`), over a real store: the ingest's placement of
 * each hook call's row, the verdict that delivers a stop by closing the run, the stale closer's close and
 * the operator's release, in any order. Each run has at most one `closed` row and no row after it, and a
 * released session's next start is a new run. Calls of one session at once, on SQLite and PostgreSQL,
 * are placed as one after the other, and a stop reaches its run once.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOOK_FED_FIELD, sessionRunId } from "../../../src/core/hook-runs.js";
import { MAX_IDENT } from "../../../src/core/kinds.js";
import { type Placement, type RowType, RunLife } from "../../../src/shell/agents/enforcement/run-life.js";
import { StoreRunVerdicts } from "../../../src/shell/agents/enforcement/run-verdict.js";
import type { OpenedPgStore } from "../../../src/shell/store/pg/open-pg-store.js";
import { PgStoreDoor } from "../../../src/shell/store/pg/pg-store-door.js";
import { SqliteStoreDoor } from "../../../src/shell/store/sqlite-store-door.js";
import type { StoreDoor } from "../../../src/shell/store/store-door.js";
import { runs } from "../../property-runs.js";
import { openFreshPgStore } from "../store/pg/pg-store.js";
import { tempStores } from "../store/temp-stores.js";

const { storeFile, open } = tempStores("harness-run-life-");

const sqlite = (file = storeFile()): StoreDoor => new SqliteStoreDoor(open(file));

/**
 * The daemon's parts that decide a hook-fed run's life, over one store's door, for the runs of
 * `harness` (several worlds may share a store, each with a harness of its own); `at` is the journal's
 * time (PostgreSQL's journal stamps its own).
 */
function world(door: StoreDoor, harness = "impl") {
  let at = 1_000;
  const clock = () => at;
  const log = door.writePath((e) => {
    throw e;
  }).journal;
  const life = new RunLife({ sessions: door.agentSessionRuns, stops: door.agentRunStops, clock });
  const append = async (
    event: Record<string, unknown> & { readonly type: string },
    writes: Parameters<typeof log.commitRows>[1] = [],
  ) => {
    const [seq] = await log.commitRows(
      [
        {
          kind: "run_event",
          source: event.type === "opened" || event.type === "closed" ? "ledger" : "observer",
          at: at++,
          event: { harness, adapter: "claude-code", [HOOK_FED_FIELD]: true, ...event },
        },
      ],
      writes,
    );
    return seq as number;
  };
  const verdicts = new StoreRunVerdicts({
    reads: door.agentRuns,
    stops: door.agentRunStops,
    holds: () => ({}),
    append: (rows, writes) =>
      log.commitRows(
        rows.map((r) => ({ kind: r.kind, source: r.source, at: at++, event: r.event })),
        writes,
      ),
    clock,
    life,
  });
  const ROW: Record<RowType, Record<string, unknown> & { readonly type: string }> = {
    opened: { type: "opened", trigger: "resume" },
    closed: { type: "closed", outcome: "success", reason: "" },
    tool: { type: "tool", tool: "Bash", action: "exec", is_error: false },
    mark: { type: "mark", mark: "turn_end" },
    attempt: { type: "attempt", tool: "Bash", action: "exec" },
  };
  return {
    harness,
    life,
    verdicts,
    /** `<harness>#<session>`, the session's first run. */
    run: (session: string) => sessionRunId(harness, session, 1),
    place: (session: string, type: RowType | undefined) => life.place(harness, session, type),
    current: (session: string) => life.current(harness, session),
    check: (run: string) => verdicts.check(harness, run),
    stop: (run: string) => door.agentRunStops.get(run),
    /** A hook call of `session`, as the ingest makes it: placed, admitted unless refused, answered. */
    async hook(session: string, type: RowType | undefined) {
      const placed = await life.place(harness, session, type);
      await this.admit(session, type, placed);
      return { placed, verdict: await verdicts.check(harness, placed.run) };
    },
    /** A placed call's row admitted, unless it was refused. */
    async admit(session: string, type: RowType | undefined, placed: Placement) {
      if (type === undefined || placed.refused !== undefined) return;
      await append({ ...ROW[type], run: placed.run, session });
      placed.done();
    },
    /** The loop guard's stop of the session's current run, in one commit with its tool row. */
    async loopStop(session: string) {
      const run = (await life.current(harness, session)).run;
      if (await life.closed(run)) return;
      await append({ type: "tool", run, session, tool: "Read", action: "read", is_error: false }, [
        { kind: "loop_guard_stop", run, harness, at, row: 0 },
      ]);
    },
    /** The stale closer's close of the session's current run, when it is open. */
    async stale(session: string) {
      const run = (await life.current(harness, session)).run;
      if (!(await life.closed(run)))
        await append({ type: "closed", run, session, outcome: "interrupted", reason: "stale" });
    },
    async release(session: string) {
      await door.agentRunStops.released((await life.current(harness, session)).run, at);
    },
    /** The harness's rows, in seq order. */
    async rows() {
      const rows = await door.journal.rowsAfter(0, 100_000);
      return rows
        .filter((r) => r.kind === "run_event" && r.event.harness === harness)
        .map((r) => ({ seq: r.seq, type: r.event.type, run: String(r.event.run) }));
    },
  };
}

type Step = { readonly session: string; readonly what: RowType | "call" | "loopStop" | "stale" | "release" };

const step: fc.Arbitrary<Step> = fc.record({
  session: fc.constantFrom("a", "b"),
  what: fc.constantFrom(
    "opened",
    "closed",
    "tool",
    "mark",
    "attempt",
    "call",
    "loopStop",
    "stale",
    "release",
  ) as fc.Arbitrary<Step["what"]>,
});

const call = fc.constantFrom<RowType | undefined>("opened", "closed", "tool", "mark", "attempt", undefined);

/** Each step in turn, as the daemon would see them one after the other. */
async function replay(w: ReturnType<typeof world>, steps: readonly Step[]): Promise<void> {
  for (const { session, what } of steps) {
    if (what === "loopStop") await w.loopStop(session);
    else if (what === "stale") await w.stale(session);
    else if (what === "release") await w.release(session);
    else await w.hook(session, what === "call" ? undefined : what);
  }
}

const placed = (p: Placement) => ({ run: p.run, refused: p.refused });

describe("a run's life", () => {
  it("A closed run gets no second close: a SessionEnd after the stop, and rows after the close, are refused", async () => {
    const w = world(sqlite());
    await w.hook("a", "opened");
    await w.loopStop("a");
    expect((await w.hook("a", undefined)).verdict).toMatchObject({
      kind: "stopped",
      run: "impl#a",
      released: false,
    });
    const end = await w.hook("a", "closed");
    expect(end.placed.refused).toEqual({
      note: "impl#a is closed already; a second close is not recorded",
      counted: false,
    });
    expect((await w.hook("a", "mark")).placed.refused?.counted).toBe(true);
    expect((await w.hook("a", "tool")).placed.refused?.counted).toBe(true);
    // Not released: a start is refused and answered stopped.
    const start = await w.hook("a", "opened");
    expect(start.placed.refused?.note).toContain("not released");
    expect(start.verdict.kind).toBe("stopped");
    expect((await w.rows()).map((r) => r.type)).toEqual(["opened", "tool", "closed"]);
  });

  it("A released session resumes as a new run, which survives a restart", async () => {
    const file = storeFile();
    const door = sqlite(file);
    const w = world(door);
    await w.hook("a", "opened");
    await w.loopStop("a");
    await w.hook("a", "tool");
    await w.release("a");
    // Released, the old run still answers stopped until the session starts again.
    expect((await w.hook("a", undefined)).verdict).toMatchObject({ kind: "stopped", released: true });
    expect(await w.hook("a", "opened")).toMatchObject({
      placed: { run: "impl#a~2" },
      verdict: { kind: "allow" },
    });
    await door.close();
    const again = world(sqlite(file));
    expect(await again.current("a")).toEqual({ run: "impl#a~2", generation: 2 });
    expect((await again.hook("a", "tool")).placed).toMatchObject({ run: "impl#a~2" });
  });

  it("a session heard again after the stale closer's close goes on as its next run; after its own end, only a start does", async () => {
    const w = world(sqlite());
    await w.hook("a", "opened");
    await w.stale("a");
    expect((await w.hook("a", "tool")).placed).toMatchObject({ run: "impl#a~2" });
    await w.hook("a", "closed");
    expect((await w.hook("a", "tool")).placed.refused?.note).toBe(
      "impl#a~2 is closed; a row after its close is not recorded",
    );
    expect((await w.hook("a", "opened")).placed).toMatchObject({ run: "impl#a~3" });
  });

  it("a stop pending while the run's SessionEnd is being admitted does not close it a second time", async () => {
    const w = world(sqlite());
    await w.hook("a", "opened");
    await w.loopStop("a");
    const end = await w.place("a", "closed");
    // Another call of the session is answered while the SessionEnd's row is on its way.
    expect((await w.check(end.run)).kind).toBe("stopped");
    end.done();
    expect((await w.rows()).filter((r) => r.type === "closed")).toEqual([]);
  });

  it("a later run's id stays within MAX_IDENT and steps over a taken one", async () => {
    const long = "s".repeat(MAX_IDENT);
    const id = sessionRunId("impl", long, 12);
    expect([...id].length).toBe(MAX_IDENT);
    expect(id.endsWith("~12")).toBe(true);
    expect(sessionRunId("impl", "a", 1)).toBe("impl#a");
    const w = world(sqlite());
    // Session `a~2`'s first run is the id session `a`'s second would take.
    await w.hook("a~2", "tool");
    await w.hook("a", "opened");
    await w.hook("a", "closed");
    expect((await w.hook("a", "opened")).placed.run).toBe("impl#a~3");
  });

  it("for any sequence of hook calls, stops, stale closes and releases, each run has at most one closed row and no row after it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const door = sqlite();
        const w = world(door);
        await replay(w, steps);
        const closedAt = new Map<string, number>();
        for (const r of await w.rows()) {
          const closed = closedAt.get(r.run);
          expect(closed, `${r.type} of ${r.run} after its close`).toBeUndefined();
          if (r.type === "closed") closedAt.set(r.run, r.seq);
        }
        await door.close();
      }),
      { numRuns: runs(60) },
    );
  });
});

/**
 * Two hook calls of one session at once, on each backend: on PostgreSQL each read is a round trip, so
 * calls interleave between their reads unless they take turns. Each test's worlds have harnesses of
 * their own, so the PostgreSQL tests share one database.
 */
describe.each([
  ["SQLite", 60],
  ["PostgreSQL", 40],
] as const)("hook calls of one session at once, on %s", (backend, numRuns) => {
  let pg: OpenedPgStore | undefined;
  let harnesses = 0;
  beforeAll(async () => {
    if (backend === "PostgreSQL") pg = await openFreshPgStore("run_life", 8);
  });
  afterAll(async () => {
    await pg?.close();
  });
  /** A world over a store of its own (SQLite) or the shared database (PostgreSQL), with a harness of its own. */
  const fresh = () => world(pg === undefined ? sqlite() : new PgStoreDoor(pg), `impl${++harnesses}`);

  it("are placed as one after the other: one close, then one next run", async () => {
    const w = fresh();
    const run = w.run("a");
    await w.hook("a", "opened");
    const ends = await Promise.all([w.place("a", "closed"), w.place("a", "closed")]);
    expect(ends.map(placed)).toEqual([
      { run, refused: undefined },
      { run, refused: { note: `${run} is closed already; a second close is not recorded`, counted: false } },
    ]);
    for (const p of ends) await w.admit("a", "closed", p);
    // Both starts open the session's next run: the first records it, the second finds it open.
    const starts = await Promise.all([w.place("a", "opened"), w.place("a", "opened")]);
    const next = `${run}~2`;
    expect(starts.map(placed)).toEqual([
      { run: next, refused: undefined },
      { run: next, refused: undefined },
    ]);
    expect(await w.current("a")).toEqual({ run: next, generation: 2 });
  });

  it("after any history, are placed as they would be one after the other", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 20 }),
        fc.array(call, { minLength: 2, maxLength: 3 }),
        async (steps, calls) => {
          const [atOnce, inTurn] = [fresh(), fresh()];
          await replay(atOnce, steps);
          await replay(inTurn, steps);
          const together = await Promise.all(calls.map((t) => atOnce.place("a", t)));
          const serial: Placement[] = [];
          for (const t of calls) serial.push(await inTurn.place("a", t));
          // The same placements, but for the harness in the run ids.
          const shape = (w: typeof atOnce, ps: readonly Placement[]) =>
            JSON.parse(JSON.stringify(ps.map(placed)).replaceAll(`${w.harness}#`, "h#"));
          expect(shape(atOnce, together)).toEqual(shape(inTurn, serial));
          expect((await atOnce.current("a")).generation).toBe((await inTurn.current("a")).generation);
        },
      ),
      { numRuns: runs(numRuns) },
    );
  });

  it("a stop is delivered once when two calls of its run are answered at once", async () => {
    const w = fresh();
    const run = w.run("a");
    await w.hook("a", "opened");
    await w.loopStop("a");
    const verdicts = await Promise.all([w.check(run), w.check(run)]);
    expect(verdicts.map((v) => v.kind)).toEqual(["stopped", "stopped"]);
    expect((await w.rows()).filter((r) => r.type === "closed").map((r) => r.run)).toEqual([run]);
    expect((await w.stop(run))?.deliveredAt).toBeDefined();
  });

  // Two daemons on one database (issue 35): each with turns of its own, the store's conditional update
  // is what keeps the run to one close. SQLite has one daemon per file.
  it.skipIf(backend === "SQLite")(
    "a stop is delivered once when two daemons answer calls of its run at once",
    async () => {
      const w = fresh();
      const other = world(new PgStoreDoor(pg as OpenedPgStore), w.harness);
      const run = w.run("a");
      await w.hook("a", "opened");
      await w.loopStop("a");
      const verdicts = await Promise.all([w.check(run), other.check(run), w.check(run), other.check(run)]);
      expect(verdicts.map((v) => v.kind)).toEqual(["stopped", "stopped", "stopped", "stopped"]);
      expect((await w.rows()).filter((r) => r.type === "closed").map((r) => r.run)).toEqual([run]);
    },
  );
});
