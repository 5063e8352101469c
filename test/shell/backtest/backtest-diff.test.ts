/**
 * `harness rules backtest --diff` against a real daemon: a loaded policy rule and a changed version of
 * it, over a journal whose rows each version fires on are known, so the fires added and removed are too.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { journalCount } from "../../support/store-reads.js";
import { type CliResult, jsonl, TestFleet } from "../daemon-harness.js";

/**
 * The starter rule budget-exhaustion-recurring changed: the docs harness left out, and a second closed
 * run of any failing kind counted, not only a second budget overrun.
 */
const CHANGED = `name = "budget-exhaustion-recurring"
description = "A harness failed or ran out of budget twice within 24h (docs aside)."
on = "run_event"
when = '''
event.type == "closed" && event.harness != "docs"
  && (event.outcome == "budget_exceeded" || event.outcome == "failed")
  && count({"type": "closed", "harness": event.harness}, duration("24h")) >= 2
'''
level = "hold"
cooldown = "6h"
target = "harness"
message = "{{harness}} ended two runs badly in 24h (last run {{run}})"
`;

const NEW_NAME = CHANGED.replace('name = "budget-exhaustion-recurring"', 'name = "ended-badly-twice"');

interface DiffJson {
  rule: string;
  fires: { seq: number }[];
  diff: {
    loaded: { hash: string; source: string; fires: number } | null;
    added?: { seq: number; target: { kind: string; key: string }; message: string }[];
    removed?: { seq: number; target: { kind: string; key: string }; message: string }[];
  };
}

const fleet = new TestFleet();
const dir = path.join(fleet.root, "checkout", "rules");
const ruleFile = (name: string, text: string): string => {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.toml`);
  fs.writeFileSync(file, text);
  return file;
};

beforeAll(async () => {
  await fleet.start();
  const closed = (harness: string, n: number, outcome: string) => ({
    kind: "run_event",
    type: "closed",
    harness,
    run: `${harness}#${n}`,
    outcome,
  });
  const ledger = fleet.tokens.get("ledger") as string;
  const rows = [
    closed("docs", 1, "budget_exceeded"),
    closed("docs", 2, "budget_exceeded"), // the loaded version fires on docs, the changed one never does
    closed("impl", 1, "budget_exceeded"),
    closed("impl", 2, "budget_exceeded"), // both fire on impl: neither added nor removed
    closed("ops", 1, "failed"),
    closed("ops", 2, "failed"), // only the changed version counts failures
  ];
  const appended = await fleet.cli(["journal", "append", "--token-file", ledger], jsonl(rows));
  expect(appended.code, appended.stderr).toBe(0);
  // Admitted is not yet committed: the backtest reads what the store holds.
  await fleet.until(() => journalCount(fleet, { kind: "run_event" }) === rows.length, "the rows committed");
}, 60_000);

afterAll(() => fleet.dispose());

/**
 * A CLI call with the journal's row count before and after it: the daemon's minute tick may add a row
 * meanwhile (the only rows besides the six above), so a backtest's "over N rows" is checked against
 * what the store held while it read.
 */
async function around(
  call: () => Promise<CliResult>,
): Promise<CliResult & { readonly rowsBefore: number; readonly rowsAfter: number }> {
  const rowsBefore = journalCount(fleet);
  const r = await call();
  return { ...r, rowsBefore, rowsAfter: journalCount(fleet) };
}

function expectRows(r: Awaited<ReturnType<typeof around>>, line: RegExp): void {
  const n = Number(line.exec(r.stdout)?.[1]);
  expect(n).toBeGreaterThanOrEqual(r.rowsBefore);
  expect(n).toBeLessThanOrEqual(r.rowsAfter);
  // Every row but the six is a tick.
  expect(journalCount(fleet) - journalCount(fleet, { kind: "tick" })).toBe(6);
}

it("rules backtest --diff shows the fires a changed rule adds and removes against the loaded version", async () => {
  const file = ruleFile("budget-exhaustion-recurring", CHANGED);
  const json = await fleet.cli(["rules", "backtest", file, "--diff", "--json"]);
  expect(json.code, json.stderr).toBe(0);
  const r = JSON.parse(json.stdout) as DiffJson;
  // The loaded version is the embedded starter rule: it fires on docs#2 and impl#2.
  expect(r.diff.loaded).toMatchObject({ source: "starter", fires: 2 });
  // The file's own backtest is there too: impl#2 and ops#2.
  expect(r.fires).toHaveLength(2);
  expect(r.diff.added).toEqual([
    expect.objectContaining({
      target: { kind: "harness", key: "ops" },
      message: "ops ended two runs badly in 24h (last run ops#2)",
    }),
  ]);
  expect(r.diff.removed).toEqual([
    expect.objectContaining({
      target: { kind: "harness", key: "docs" },
      message: "docs exceeded its budget twice in 24h (last run docs#2)",
    }),
  ]);
  // impl#2's row fired in both versions, with different messages: neither added nor removed.
  const [added] = r.diff.added ?? [];
  const [removed] = r.diff.removed ?? [];
  const both = r.fires.map((f) => f.seq).filter((seq) => seq !== added?.seq);
  expect(both).toHaveLength(1);
  expect((removed?.seq ?? 0) < (both[0] ?? 0) && (both[0] ?? 0) < (added?.seq ?? 0)).toBe(true);

  const text = await around(() => fleet.cli(["rules", "backtest", file, "--diff"]));
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout).toContain("against the loaded budget-exhaustion-recurring (");
  expect(text.stdout).toContain(
    "from the embedded starter pack) over the same rows: 1 fire added, 1 removed",
  );
  const lines = text.stdout.split("\n");
  const addedAt = lines.findIndex((l) => l.startsWith("added:"));
  const removedAt = lines.findIndex((l) => l.startsWith("removed:"));
  expect(addedAt).toBeGreaterThan(0);
  expect(removedAt).toBeGreaterThan(addedAt);
  expect(lines.slice(addedAt, removedAt).join("\n")).toMatch(
    new RegExp(
      `^${added?.seq}\\s.*harness ops\\s.*ops ended two runs badly in 24h \\(last run ops#2\\)$`,
      "m",
    ),
  );
  expect(lines.slice(removedAt).join("\n")).toMatch(
    new RegExp(`^${removed?.seq}\\s.*harness docs\\s.*docs exceeded its budget twice in 24h`, "m"),
  );
  expectRows(text, /^file: 2 fires in 30d over (\d+) rows/m);
  expectRows(text, /^loaded: 2 fires in 30d over (\d+) rows/m);

  // A file no loaded rule is named as: said plainly, then the plain backtest.
  const other = ruleFile("ended-badly-twice", NEW_NAME);
  const fresh = await around(() => fleet.cli(["rules", "backtest", other, "--diff"]));
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(fresh.stdout.split("\n")[0]).toBe(
    "no loaded rule is named ended-badly-twice: nothing to diff against; the plain backtest follows",
  );
  expectRows(fresh, /^2 fires in 30d over (\d+) rows/m);
  const freshJson = await fleet.cli(["rules", "backtest", other, "--diff", "--json"]);
  expect((JSON.parse(freshJson.stdout) as DiffJson).diff).toEqual({ loaded: null });

  // With no daemon answering, the same diff over the store.
  await fleet.stop();
  const local = await fleet.cli(["rules", "backtest", file, "--diff", "--json"]);
  expect(local.code, local.stderr).toBe(0);
  const viaStore = JSON.parse(local.stdout) as DiffJson & { ran_on: string };
  expect(viaStore.ran_on).toBe("store");
  expect(viaStore.diff).toEqual(r.diff);
}, 60_000);
