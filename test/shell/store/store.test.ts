import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, openStoreReadOnly, StoreOpenError } from "../../../src/shell/store/open-store.js";
import { SCHEMA_VERSION } from "../../../src/shell/store/schema.js";
import { StoreLockedError } from "../../../src/shell/store/store-lock.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-store-"));
  dirs.push(d);
  return d;
};

describe("the store", () => {
  it("is created 0600 in a 0700 directory with WAL, synchronous=FULL, foreign keys and incremental vacuum", () => {
    const file = path.join(temp(), "state", "harness", "harness.db");
    const s = openStore(file, "test");
    try {
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(s.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(s.db.pragma("synchronous", { simple: true })).toBe(2);
      expect(s.db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(s.db.pragma("auto_vacuum", { simple: true })).toBe(2);
      expect(s.db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      s.close();
    }
  });

  it("reopens an existing store without migrating it again", () => {
    const file = path.join(temp(), "harness.db");
    openStore(file, "test").close();
    const s = openStore(file, "test");
    expect(s.db.prepare("SELECT cursor FROM evaluator").get()).toEqual({ cursor: 0 });
    s.close();
  });

  it("refuses a corrupt file with a clear error and leaves it as it was", () => {
    const file = path.join(temp(), "harness.db");
    const garbage = Buffer.from("this is not a database, it is a file someone overwrote".repeat(100));
    fs.writeFileSync(file, garbage, { mode: 0o600 });
    expect(() => openStore(file, "test")).toThrow(StoreOpenError);
    expect(() => openStore(file, "test")).toThrow(/not a readable SQLite database/);
    expect(fs.readFileSync(file).equals(garbage)).toBe(true);
  });

  it("refuses a store of a newer schema version, and never downgrades it", () => {
    const file = path.join(temp(), "harness.db");
    openStore(file, "test").close();
    const db = new Database(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openStore(file, "test")).toThrow(/schema version \d+ is newer than this harness knows/);
    const check = new Database(file, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION + 1);
    check.close();
    expect(() => openStoreReadOnly(file)).toThrow(StoreOpenError);
  });

  it("lets one writer hold it at a time, and takes over the lock of a writer that died", () => {
    const file = path.join(temp(), "harness.db");
    const first = openStore(file, "harness daemon (pid 1)");
    expect(() => openStore(file, "second")).toThrow(StoreLockedError);
    first.close();
    // A lock left by a process that no longer runs (a SIGKILLed daemon) is stale.
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, owner: "dead" }));
    const second = openStore(file, "second");
    second.close();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it("opens read-only without a lock, beside a writer", () => {
    const file = path.join(temp(), "harness.db");
    const writer = openStore(file, "test");
    const reader = openStoreReadOnly(file);
    expect(reader.db.prepare("SELECT count(*) AS n FROM rule_journal").get()).toEqual({ n: 0 });
    expect(() => reader.db.prepare("DELETE FROM rule_journal").run()).toThrow(/readonly/);
    reader.close();
    writer.close();
  });
});
