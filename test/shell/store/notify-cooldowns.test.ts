import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { NotifyCooldowns } from "../../../src/shell/store/notify-cooldowns.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../../../src/shell/store/schema.js";
import { tempStores } from "./temp-stores.js";

const { storeFile, open } = tempStores("harness-cooldowns-");

const fired = (rule: string) => ({ harness: "impl", event: "rule_fired", rule });

describe("NotifyCooldowns", () => {
  it("keeps the last send per (harness, event, rule) across a reopen of the store", () => {
    const file = storeFile();
    const first = open(file);
    const c = new NotifyCooldowns(first.db);
    c.recordSent(fired("a"), 100);
    c.recordSent(fired("a"), 200);
    c.recordSent({ ...fired("a"), event: "rule_hold" }, 150);
    first.close();
    const again = new NotifyCooldowns(open(file).db);
    expect(again.lastSent(fired("a"))).toBe(200);
    expect(again.lastSent({ ...fired("a"), event: "rule_hold" })).toBe(150);
    expect(again.lastSent({ ...fired("a"), harness: "" })).toBeUndefined();
    expect(again.lastSent(fired("b"))).toBeUndefined();
  });

  it("forgets every key last sent at or before the given time", () => {
    const c = new NotifyCooldowns(open(storeFile()).db);
    c.recordSent(fired("a"), 100);
    c.recordSent(fired("b"), 200);
    c.recordSent(fired("c"), 201);
    c.forgetSentBy(200);
    expect(["a", "b", "c"].map((r) => c.lastSent(fired(r)))).toEqual([undefined, undefined, 201]);
  });
});

describe("the store's V4 migration", () => {
  it("adds notify_cooldowns to a V3 store, keeping its rows", () => {
    const file = storeFile();
    const v3 = new Database(file);
    for (const m of MIGRATIONS.slice(0, 3)) v3.exec(m);
    v3.pragma("user_version = 3");
    v3.prepare("UPDATE evaluator SET cursor = 9").run();
    v3.close();
    const s = open(file);
    expect(s.db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.db.prepare("SELECT cursor FROM evaluator").get()).toEqual({ cursor: 9 });
    expect(new NotifyCooldowns(s.db).lastSent(fired("a"))).toBeUndefined();
  });
});
