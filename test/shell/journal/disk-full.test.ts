/**
 * Issue 26, finding 4: a full disk must not turn acknowledged hook rows into lost ones. The store is
 * made full deterministically with SQLite's `max_page_count` (the same SQLITE_FULL a full disk gives),
 * and hook calls go through the real ingest and the real journal writer.
 */
import { describe, expect, it } from "vitest";
import { AGENTS } from "../../../src/shell/agents/adapters/registry.js";
import type { HookFormat } from "../../../src/shell/agents/ingest/hook-format.js";
import { HookIngest, type IngestResponse } from "../../../src/shell/agents/ingest/ingest.js";
import { admitEvents } from "../../../src/shell/journal/admit.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { StoreWriteHealth } from "../../../src/shell/store/store-write-health.js";
import { tempStores } from "../store/temp-stores.js";
import { testWriter } from "./test-writer.js";

const { storeFile, open } = tempStores("harness-disk-full-");

/** A store that is full: it may grow by `pages` pages at most. */
function fill(db: Db, pages: number): void {
  const used = db.pragma("page_count", { simple: true }) as number;
  db.pragma(`max_page_count = ${used + pages}`);
}

function ingestOn(db: Db, health?: StoreWriteHealth) {
  const journal = new JournalTable(db);
  const writer = testWriter(db, journal, {
    clock: () => 1_700_000_000_000,
    batchSize: 20,
    queueLimit: 10_000,
    onError: (e) => health?.failed(e),
    onCommitted: () => health?.succeeded(),
  });
  const ingest = new HookIngest({
    admit: (source, events, key, options) => admitEvents(writer, source, events, key, options),
    identify: (token) =>
      token === "obs" ? { source: "observer" } : token === "led" ? { source: "ledger" } : undefined,
    verdicts: { check: async () => ({ kind: "allow" }), peek: async () => ({ kind: "allow" }) },
    runs: { place: async (harness, session) => ({ run: `${harness}#${session}`, done: () => {} }) },
    evaluated: async () => true,
    failMode: () => "allow",
    gitFacts: async () => ({}),
    verifyPatterns: () => [],
  });
  return { journal, ingest };
}

/** A UserPromptSubmit of its own session: one mark row, told apart by the session. */
const call = (ingest: HookIngest, session: string, key?: string): Promise<IngestResponse> =>
  ingest.handle({
    format: AGENTS.hook("claude-code") as HookFormat,
    harness: "alpha",
    observerToken: "obs",
    ledgerToken: "led",
    body: new TextEncoder().encode(
      JSON.stringify({
        session_id: session,
        hook_event_name: "UserPromptSubmit",
        cwd: "/nowhere",
        prompt: "p".repeat(2000),
        transcript_path: `/t/${"x".repeat(200)}`,
      }),
    ),
    ...(key === undefined ? {} : { key, at: 1_699_999_999_000 }),
  });

const storedSessions = (journal: JournalTable): Set<string> =>
  new Set(journal.rowsAfter(0, 100_000).map((r) => String((r.event as { session?: unknown }).session)));

describe("finding 4: disk full, nothing acknowledged unless committed", () => {
  it("finding 4: with the store full (max_page_count) every call answered admitted is stored, the others are answered 503 unstored", async () => {
    const db = open(storeFile()).db;
    const health = new StoreWriteHealth("the-store", () => 5);
    const { journal, ingest } = ingestOn(db, health);
    fill(db, 4);
    const sessions = Array.from({ length: 300 }, (_, i) => `s-${i}`);
    const answers = await Promise.all(sessions.map((s) => call(ingest, s)));
    const stored = storedSessions(journal);
    const admitted = sessions.filter((_, i) => answers[i]?.row === "admitted");
    const refused = answers.filter((a) => a.row !== "admitted");
    // The store filled during the burst: some rows fit, the rest did not.
    expect(admitted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const s of admitted) expect(stored.has(s), `${s} was answered admitted`).toBe(true);
    expect(stored.size).toBe(admitted.length);
    for (const a of refused) {
      expect(a.status).toBe(503);
      expect(a.row).toBe("unstored");
      expect(a.note).toMatch(
        /^the journal could not store the row \(.*database or disk is full.*\); not recorded$/,
      );
    }
    expect(health.current).toMatchObject({ path: "the-store", sinceMs: 5 });
    expect(health.current?.error).toMatch(/database or disk is full/);

    // Room again: the next call is stored and the failure is over.
    db.pragma("max_page_count = 1073741823");
    const again = await call(ingest, "s-after");
    expect(again).toMatchObject({ status: 200, row: "admitted" });
    expect(storedSessions(journal).has("s-after")).toBe(true);
    expect(health.current).toBeUndefined();
  });

  it("finding 4: a spooled call whose commit fails is answered 503, so the forwarder keeps it in its spool", async () => {
    const db = open(storeFile()).db;
    const { journal, ingest } = ingestOn(db);
    fill(db, 0);
    // Fill the pages the store has: the rows that fit, until the first that does not.
    for (let i = 0; (await call(ingest, `filler-${i}`)).row === "admitted"; i++);
    const before = journal.last().seq;
    const answer = await call(ingest, "s-spooled", "key-1");
    expect(answer).toMatchObject({ status: 503, row: "unstored" });
    expect(journal.last().seq).toBe(before);
    // Delivered again once the store has room, it is admitted (its key was not stored either).
    db.pragma("max_page_count = 1073741823");
    expect(await call(ingest, "s-spooled", "key-1")).toMatchObject({ status: 200, row: "admitted" });
    expect([...storedSessions(journal)].filter((s) => !s.startsWith("filler-"))).toEqual(["s-spooled"]);
  });
});
