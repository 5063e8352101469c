/** Migrations of an older store: each adds its tables and keeps the rows the store already held. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { LastGoodCommits } from "../../../src/shell/store/last-good-commits.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { ProposalStore } from "../../../src/shell/store/proposal-store.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../../../src/shell/store/schema.js";

const dirs: string[] = [];
const stores: OpenedStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A store file at schema version `version`, its evaluator cursor at `cursor`. */
function storeAtVersion(version: number, cursor: number): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-migrations-"));
  dirs.push(d);
  const file = path.join(d, "harness.db");
  const old = new Database(file);
  for (let v = 0; v < version; v++) old.exec(MIGRATIONS[v] as string);
  old.pragma(`user_version = ${version}`);
  old.prepare("UPDATE evaluator SET cursor = ?").run(cursor);
  old.close();
  return file;
}

function opened(file: string): OpenedStore {
  const s = openStore(file, "test");
  stores.push(s);
  return s;
}

describe("the store's V2 migration", () => {
  it("adds policy_last_good to a V1 store, keeping its rows", () => {
    const s = opened(storeAtVersion(1, 42));
    expect(s.db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.db.prepare("SELECT cursor FROM evaluator").get()).toEqual({ cursor: 42 });
    const good = new LastGoodCommits(s.db);
    expect(good.get("ops")).toBeUndefined();
    good.record({ repo: "ops", branch: "main", commit: "a".repeat(40), loadedAt: 5 });
    good.record({ repo: "ops", branch: "main", commit: "b".repeat(40), loadedAt: 6 });
    expect(good.get("ops")).toEqual({ repo: "ops", branch: "main", commit: "b".repeat(40), loadedAt: 6 });
  });
});

describe("the store's V3 migration", () => {
  it("adds the proposal tables to a V2 store, keeping its rows", () => {
    const s = opened(storeAtVersion(2, 7));
    expect(s.db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.db.prepare("SELECT cursor FROM evaluator").get()).toEqual({ cursor: 7 });
    expect(new ProposalStore(s.db).backlog()).toBe(0);
  });
});
