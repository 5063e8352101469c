import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { APPEND_KEY_TTL_MS, JournalAppends } from "../../../src/shell/store/journal-appends.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../../../src/shell/store/schema.js";
import { tempStores } from "./temp-stores.js";

const { storeFile, open } = tempStores("harness-appends-");

describe("JournalAppends", () => {
  it("answers a key per source, and keeps it at least an hour", () => {
    const a = new JournalAppends(open(storeFile()).db);
    a.record("ledger", "k1", "[1]", 1_000);
    expect(a.answer("ledger", "k1")).toBe("[1]");
    expect(a.answer("observer", "k1")).toBeUndefined();
    a.record("ledger", "k2", "[2]", 1_000 + APPEND_KEY_TTL_MS);
    expect(a.answer("ledger", "k1")).toBe("[1]");
    a.record("ledger", "k3", "[3]", 1_001 + APPEND_KEY_TTL_MS);
    expect(a.answer("ledger", "k1")).toBeUndefined();
    expect(a.answer("ledger", "k2")).toBe("[2]");
  });
});

describe("the store's V5 migration", () => {
  it("adds journal_appends to a V4 store, keeping its rows", () => {
    const file = storeFile();
    const v4 = new Database(file);
    for (const m of MIGRATIONS.slice(0, 4)) v4.exec(m);
    v4.pragma("user_version = 4");
    v4.prepare("UPDATE evaluator SET cursor = 9").run();
    v4.close();
    const s = open(file);
    expect(s.db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.db.prepare("SELECT cursor FROM evaluator").get()).toEqual({ cursor: 9 });
    expect(new JournalAppends(s.db).answer("ledger", "k")).toBeUndefined();
  });
});
