/**
 * Commits that need not wait for the disk (`wal-sync.ts`), and the writer's choice of them: only a
 * batch whose every group was offered `unsynced` (a live hook call's row) commits that way.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { WalSync } from "../../../src/shell/store/wal-sync.js";
import { testWriter } from "../journal/test-writer.js";
import { tempStores } from "./temp-stores.js";

const { storeFile, open } = tempStores("harness-wal-sync-");

describe("WalSync", () => {
  it("commits with synchronous = NORMAL, puts FULL back even when the commit throws, and syncs the WAL", async () => {
    const file = storeFile();
    const store = open(file);
    const errors: Error[] = [];
    const sync = new WalSync(store.db, `${file}-wal`, (e) => errors.push(e));
    const seen = sync.unsynced(() => store.db.pragma("synchronous", { simple: true }));
    expect(seen).toBe(1);
    expect(store.db.pragma("synchronous", { simple: true })).toBe(2);
    expect(() =>
      sync.unsynced(() => {
        throw new Error("the commit failed");
      }),
    ).toThrow("the commit failed");
    expect(store.db.pragma("synchronous", { simple: true })).toBe(2);
    // A row committed unsynced is committed: another connection reads it.
    const journal = new JournalTable(store.db);
    sync.unsynced(() =>
      store.db
        .transaction(() => journal.append({ kind: "tick", source: "tick", at: 1, event: { type: "tick" } }))
        .immediate(),
    );
    const reader = new Database(file, { readonly: true });
    expect((reader.prepare("SELECT count(*) AS n FROM rule_journal").get() as { n: number }).n).toBe(1);
    reader.close();
    await sync.close();
    expect(errors).toEqual([]);
  });

  it("reports a WAL it cannot sync and keeps working", async () => {
    const file = storeFile();
    const store = open(file);
    const errors: Error[] = [];
    const sync = new WalSync(store.db, `${file}-no-such-wal`, (e) => errors.push(e));
    sync.unsynced(() => undefined);
    await sync.close();
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(["ENOENT"]);
  });
});

describe("the journal writer", () => {
  it("commits a batch unsynced only when every group in it was offered unsynced", async () => {
    const store = open(storeFile());
    // Each commit, and whether it ran inside `unsynced`.
    const commits: string[] = [];
    let inside = false;
    const writer = testWriter(store.db, new JournalTable(store.db), {
      clock: () => 1,
      unsynced: (commit) => {
        inside = true;
        try {
          return commit();
        } finally {
          inside = false;
        }
      },
    });
    store.db.function("seen", () => {
      commits.push(inside ? "unsynced" : "synced");
      return 0;
    });
    store.db.exec("CREATE TEMP TRIGGER seen AFTER INSERT ON rule_journal BEGIN SELECT seen(); END");
    const row = { source: "observer" as const, kind: "run_event" as const, event: { type: "tool" } };
    writer.offerGroup([row], undefined, true);
    writer.offerGroup([row], undefined, true);
    await writer.flush();
    writer.offerGroup([row], undefined, true);
    writer.offerGroup([row], undefined);
    await writer.flush();
    writer.offer(row);
    await writer.flush();
    await writer.close();
    expect(commits).toEqual(["unsynced", "unsynced", "synced", "synced", "synced"]);
  });
});
