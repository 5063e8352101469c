/**
 * `harness store backup PATH` against a real daemon that is admitting rows while the copy is taken: the
 * copy is one commit's store (its journal the live journal's first rows, unchanged), whole, and opens
 * as the daemon's store would; an existing PATH is never overwritten.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openStore } from "../../../src/shell/store/open-store.js";
import { journalCount, journalRows } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const fleet = new TestFleet();
const BATCHES = 6;
const PER_BATCH = 300;

const rows = (batch: number) =>
  Array.from({ length: PER_BATCH }, (_, i) => ({
    kind: "run_event",
    type: "tool",
    harness: `h${i % 7}`,
    run: `h${i % 7}#${batch}`,
    tool: "Edit",
    is_error: i % 11 === 0,
  }));

beforeAll(() => fleet.start(), 30_000);
afterAll(() => fleet.dispose());

it("an online backup taken while rows are admitted is one commit's whole store, and opens as the daemon's", async () => {
  const observer = fleet.tokens.get("observer") as string;
  const copy = path.join(fleet.root, "backup.db");
  // The appends go on while the backup runs: a batch after another, until the backup has answered.
  let backedUp = false;
  const appending = (async () => {
    for (let b = 0; b < BATCHES; b++) {
      const r = await fleet.cli(["journal", "append", "--token-file", observer], jsonl(rows(b)));
      expect(r.code, r.stderr).toBe(0);
      if (backedUp && b >= 1) return b + 1;
    }
    return BATCHES;
  })();
  await fleet.until(() => journalCount(fleet, { type: "tool" }) > 0, "the first rows committed", 20_000);
  const backup = await fleet.cli(["store", "backup", copy, "--json"]);
  backedUp = true;
  expect(backup.code, backup.stderr).toBe(0);
  const batches = await appending;
  await fleet.until(
    () => journalCount(fleet, { type: "tool" }) === batches * PER_BATCH,
    "every appended row committed",
    30_000,
  );

  const answer = JSON.parse(backup.stdout) as Record<string, unknown>;
  expect(answer).toMatchObject({ path: copy, source: fleet.storePath, schema_version: expect.any(Number) });
  expect(fs.statSync(copy).mode & 0o777).toBe(0o600);
  expect(fs.readdirSync(fleet.root).filter((f) => f.includes(".partial"))).toEqual([]);

  // The copy's journal is the live journal's first rows, unchanged, as the answer counts them.
  const copied = journalRows({ storePath: copy });
  const live = journalRows(fleet);
  expect(copied.length).toBe(answer.journal_rows);
  expect(copied.at(-1)?.seq ?? 0).toBe(answer.last_seq);
  expect(copied.length).toBeGreaterThan(0);
  expect(copied).toEqual(live.slice(0, copied.length));

  // Restored, it is a store the daemon opens (lock, pragmas, schema) as its own.
  const restored = path.join(fleet.root, "restored", "harness.db");
  fs.mkdirSync(path.dirname(restored), { mode: 0o700 });
  fs.copyFileSync(copy, restored);
  const opened = openStore(restored, "store-backup test");
  opened.close();
}, 120_000);

it("a backup never overwrites a file: an existing PATH is refused and left as it was", async () => {
  const existing = path.join(fleet.root, "existing.db");
  fs.writeFileSync(existing, "not a store, and not the backup's to replace\n");
  const r = await fleet.cli(["store", "backup", existing]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`harness store backup: backup ${existing}: exists already`);
  expect(fs.readFileSync(existing, "utf8")).toBe("not a store, and not the backup's to replace\n");
}, 30_000);
