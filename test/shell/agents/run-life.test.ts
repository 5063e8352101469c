/**
 * A run's life, once (`agents/enforcement/run-life.ts`), over a real store: the ingest's placement of
 * each hook call's row, the verdict that delivers a stop by closing the run, the stale closer's close and
 * the operator's release, in any order. Each run has at most one `closed` row and no row after it, and a
 * released session's next start is a new run.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOOK_FED_FIELD, sessionRunId } from "../../../src/core/hook-runs.js";
import { MAX_IDENT } from "../../../src/core/kinds.js";
import { type Placement, type RowType, RunLife } from "../../../src/shell/agents/enforcement/run-life.js";
import { StoreRunVerdicts } from "../../../src/shell/agents/enforcement/run-verdict.js";
import { AgentRunReads } from "../../../src/shell/store/agent-run-reads.js";
import { AgentRunStops } from "../../../src/shell/store/agent-run-stops.js";
import { AgentSessionRuns } from "../../../src/shell/store/agent-session-runs.js";
import { promised } from "../../../src/shell/store/async-port.js";
import { DerivedCursors } from "../../../src/shell/store/derived-cursors.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { OpenedStore } from "../../../src/shell/store/open-store.js";
import { SqliteJournalLog } from "../../../src/shell/store/sqlite-write-ports.js";
import { TokenStore } from "../../../src/shell/store/token-store.js";
import { runs } from "../../property-runs.js";
import { journalRows } from "../../support/store-reads.js";
import { tempStores } from "../store/temp-stores.js";

const { storeFile, open } = tempStores("harness-run-life-");

/** The daemon's parts that decide a hook-fed run's life, over one store; `at` is the journal's time. */
function world(s: OpenedStore) {
  let at = 1_000;
  const clock = () => at;
  const journal = new JournalTable(s.db);
  const stops = new AgentRunStops(s.db);
  const life = new RunLife({
    sessions: promised(new AgentSessionRuns(s.db)),
    stops: promised(stops),
    clock,
  });
  const derivedLog = new SqliteJournalLog(new JournalCommits(s.db, journal), {
    cursors: new DerivedCursors(s.db),
    stops,
    tokens: new TokenStore(s.db),
  });
  const append = (event: Record<string, unknown> & { readonly type: string }) =>
    s.db.transaction(() =>
      journal.append({
        kind: "run_event",
        source: event.type === "opened" || event.type === "closed" ? "ledger" : "observer",
        at: at++,
        event: { harness: "impl", adapter: "claude-code", [HOOK_FED_FIELD]: true, ...event },
      }),
    )();
  const verdicts = new StoreRunVerdicts({
    reads: promised(new AgentRunReads(s.db)),
    stops: promised(stops),
    holds: () => ({}),
    append: (rows, writes) =>
      derivedLog.commitRows(
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
    life,
    stops,
    verdicts,
    /** A hook call of `session`, as the ingest makes it: placed, admitted unless refused, answered. */
    async hook(session: string, type: RowType | undefined) {
      const placed = await life.place("impl", session, type);
      this.admit(session, type, placed);
      return { placed, verdict: await verdicts.check("impl", placed.run) };
    },
    /** A placed call's row admitted, unless it was refused. */
    admit(session: string, type: RowType | undefined, placed: Placement) {
      if (type === undefined || placed.refused !== undefined) return;
      append({ ...ROW[type], run: placed.run, session });
      placed.done();
    },
    /** The loop guard's stop of the session's current run. */
    async loopStop(session: string) {
      const run = (await life.current("impl", session)).run;
      if (await life.closed(run)) return;
      const seq = append({ type: "tool", run, session, tool: "Read", action: "read", is_error: false });
      stops.loopGuardStop({ run, harness: "impl", loopSeq: seq, at });
    },
    /** The stale closer's close of the session's current run, when it is open. */
    async stale(session: string) {
      const run = (await life.current("impl", session)).run;
      if (!(await life.closed(run)))
        append({ type: "closed", run, session, outcome: "interrupted", reason: "stale" });
    },
    async release(session: string) {
      stops.released((await life.current("impl", session)).run, at);
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

const rowsOf = (s: OpenedStore) =>
  journalRows(s, { kind: "run_event" }).map((r) => ({ seq: r.seq, type: r.type, run: String(r.event.run) }));

describe("a run's life", () => {
  it("A closed run gets no second close: a SessionEnd after the stop, and rows after the close, are refused", async () => {
    const s = open(storeFile());
    const w = world(s);
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
    expect(rowsOf(s).map((r) => r.type)).toEqual(["opened", "tool", "closed"]);
  });

  it("A released session resumes as a new run, which survives a restart", async () => {
    const file = storeFile();
    const s = open(file);
    const w = world(s);
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
    s.close();
    const again = world(open(file));
    expect(await again.life.current("impl", "a")).toEqual({ run: "impl#a~2", generation: 2 });
    expect((await again.hook("a", "tool")).placed).toMatchObject({ run: "impl#a~2" });
  });

  it("a session heard again after the stale closer's close goes on as its next run; after its own end, only a start does", async () => {
    const s = open(storeFile());
    const w = world(s);
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
    const s = open(storeFile());
    const w = world(s);
    await w.hook("a", "opened");
    await w.loopStop("a");
    const end = await w.life.place("impl", "a", "closed");
    // Another call of the session is answered while the SessionEnd's row is on its way.
    expect((await w.verdicts.check("impl", end.run)).kind).toBe("stopped");
    end.done();
    expect(rowsOf(s).filter((r) => r.type === "closed")).toEqual([]);
  });

  it("a later run's id stays within MAX_IDENT and steps over a taken one", async () => {
    const long = "s".repeat(MAX_IDENT);
    const id = sessionRunId("impl", long, 12);
    expect([...id].length).toBe(MAX_IDENT);
    expect(id.endsWith("~12")).toBe(true);
    expect(sessionRunId("impl", "a", 1)).toBe("impl#a");
    const s = open(storeFile());
    const w = world(s);
    // Session `a~2`'s first run is the id session `a`'s second would take.
    await w.hook("a~2", "tool");
    await w.hook("a", "opened");
    await w.hook("a", "closed");
    expect((await w.hook("a", "opened")).placed.run).toBe("impl#a~3");
  });

  it("two hook calls of one session at once are placed as one after the other: one close, then one next run", async () => {
    const s = open(storeFile());
    const w = world(s);
    await w.hook("a", "opened");
    const ends = await Promise.all([
      w.life.place("impl", "a", "closed"),
      w.life.place("impl", "a", "closed"),
    ]);
    expect(ends.map(placed)).toEqual([
      { run: "impl#a", refused: undefined },
      {
        run: "impl#a",
        refused: { note: "impl#a is closed already; a second close is not recorded", counted: false },
      },
    ]);
    for (const p of ends) w.admit("a", "closed", p);
    // Both starts open the session's next run: the first records it, the second finds it open.
    const starts = await Promise.all([
      w.life.place("impl", "a", "opened"),
      w.life.place("impl", "a", "opened"),
    ]);
    expect(starts.map(placed)).toEqual([
      { run: "impl#a~2", refused: undefined },
      { run: "impl#a~2", refused: undefined },
    ]);
    expect(await w.life.current("impl", "a")).toEqual({ run: "impl#a~2", generation: 2 });
  });

  it("for any history, hook calls of one session at once are placed as they would be one after the other", async () => {
    const call = fc.constantFrom<RowType | undefined>(
      "opened",
      "closed",
      "tool",
      "mark",
      "attempt",
      undefined,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 20 }),
        fc.array(call, { minLength: 2, maxLength: 3 }),
        async (steps, calls) => {
          const [atOnce, inTurn] = [open(storeFile()), open(storeFile())];
          const [w1, w2] = [world(atOnce), world(inTurn)];
          await replay(w1, steps);
          await replay(w2, steps);
          const together = await Promise.all(calls.map((t) => w1.life.place("impl", "a", t)));
          const serial: Placement[] = [];
          for (const t of calls) serial.push(await w2.life.place("impl", "a", t));
          expect(together.map(placed)).toEqual(serial.map(placed));
          expect(await w1.life.current("impl", "a")).toEqual(await w2.life.current("impl", "a"));
          atOnce.close();
          inTurn.close();
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it("a stop is delivered once when two calls of its run are answered at once", async () => {
    const s = open(storeFile());
    const w = world(s);
    await w.hook("a", "opened");
    await w.loopStop("a");
    const verdicts = await Promise.all([
      w.verdicts.check("impl", "impl#a"),
      w.verdicts.check("impl", "impl#a"),
    ]);
    expect(verdicts.map((v) => v.kind)).toEqual(["stopped", "stopped"]);
    expect(rowsOf(s).filter((r) => r.type === "closed")).toEqual([{ seq: 3, type: "closed", run: "impl#a" }]);
    expect(w.stops.get("impl#a")?.deliveredAt).toBeDefined();
  });

  it("for any sequence of hook calls, stops, stale closes and releases, each run has at most one closed row and no row after it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const s = open(storeFile());
        const w = world(s);
        await replay(w, steps);
        const closedAt = new Map<string, number>();
        for (const r of rowsOf(s)) {
          const closed = closedAt.get(r.run);
          expect(closed, `${r.type} of ${r.run} after its close`).toBeUndefined();
          if (r.type === "closed") closedAt.set(r.run, r.seq);
        }
        s.close();
      }),
      { numRuns: runs(60) },
    );
  });
});
