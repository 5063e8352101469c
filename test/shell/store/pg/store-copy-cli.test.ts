/**
 * `harness store copy` through the built CLI, from a running daemon's store: a month of fleet evaluated
 * live (every starter rule fired: fires, actions, holds, cooldowns, cursors) and tokens issued, copied
 * while the daemon holds the store, into an empty database named by a postgresql:// URL, verified row
 * for row; then a daemon started on that database backtests every starter rule to the same fires.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STARTER_FILES } from "../../../../src/core/starter-pack.generated.js";
import type { PgDatabase } from "../../../support/pg-cluster.js";
import { fires, holds } from "../../../support/store-reads.js";
import { TestFleet } from "../../daemon-harness.js";
import { evaluateMonthLive } from "../../fleet-month.js";
import { freshPgDatabase } from "./pg-store.js";

interface CopyJson {
  source: string;
  target: string;
  seconds: number;
  tables: { table: string; sqlite: number; postgres: number }[];
  head: { seq: number; at: number };
  verified: boolean;
  mismatch?: unknown;
}

/** The database as a URL with its unix socket's directory as `host`, as libpq writes it. */
const urlOf = (db: PgDatabase) =>
  `postgresql://${db.user}@/${encodeURIComponent(db.database)}?host=${encodeURIComponent(db.host)}`;

describe("harness store copy from a running daemon's store", () => {
  const fleet = new TestFleet();
  let rows = 0;
  const tokens: string[] = [];

  beforeAll(async () => {
    rows = await evaluateMonthLive(fleet);
    // Issued tokens too: only their digests are stored (a blob column), one of them revoked.
    for (const args of [
      ["--enrol", "--harness", "impl", "--ttl", "1h"],
      ["--gateway", "--harness", "miner", "--run", "miner#7"],
    ]) {
      const r = await fleet.cli(["token", "create", ...args, "--json"]);
      if (r.code !== 0) throw new Error(`token create: ${r.stderr}`);
      tokens.push((JSON.parse(r.stdout) as { id: string }).id);
    }
    const revoked = await fleet.cli(["token", "revoke", tokens[0] as string]);
    if (revoked.code !== 0) throw new Error(`token revoke: ${revoked.stderr}`);
  }, 180_000);
  afterAll(() => fleet.dispose());

  it("copies a live daemon's store into an empty database, every table verified row for row", async () => {
    const db = await freshPgDatabase("store_copy_cli");
    const r = await fleet.cli(["store", "copy", "--from", fleet.storePath, "--to", urlOf(db), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as CopyJson;
    expect(report.verified).toBe(true);
    expect(report.target).toBe(`postgresql ${db.host}/${db.database}`);
    const count = (t: string) => report.tables.find((c) => c.table === t);
    for (const c of report.tables) expect(c.postgres, c.table).toBe(c.sqlite);
    expect(count("rule_journal")?.sqlite).toBeGreaterThanOrEqual(rows);
    expect(count("rule_fires")?.sqlite).toBe(fires(fleet).length);
    expect(count("rule_fires")?.sqlite).toBeGreaterThan(0);
    expect(count("rule_actions")?.sqlite).toBeGreaterThan(0);
    expect(count("rule_holds")?.sqlite).toBe(holds(fleet).length);
    expect(report.head.seq).toBe(count("rule_journal")?.sqlite);
    expect(count("issued_tokens")?.sqlite).toBeGreaterThanOrEqual(tokens.length);

    // Again into the same database: refused, naming what it holds, exit 1.
    const again = await fleet.cli(["store", "copy", "--from", fleet.storePath, "--to", urlOf(db)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`harness store copy: postgresql ${db.host}/${db.database} is not empty (`);
  }, 120_000);

  it("then a daemon on the copy backtests every starter rule to the fires the daemon on SQLite gives", async () => {
    const db = await freshPgDatabase("store_copy_backtest");
    const r = await fleet.cli(["store", "copy", "--from", fleet.storePath, "--to", urlOf(db), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const onPg = new TestFleet({ pg: db });
    try {
      await onPg.start();
      let fired = 0;
      for (const [file, text] of STARTER_FILES) {
        const rule = path.join(fleet.root, path.basename(file));
        fs.writeFileSync(rule, text);
        const backtest = async (f: TestFleet) => {
          const out = await f.cli(["rules", "backtest", rule, "--since", "20d", "--json"]);
          expect(out.code, `${file} ${out.stderr}`).toBe(0);
          const { ran_on: _, ...report } = JSON.parse(out.stdout) as Record<string, unknown>;
          return report;
        };
        // `--since` counts back from each daemon's clock at its call: a row admitted in the moment
        // between the two calls starts one stretch and not the other. Such a pair is asked again.
        let sqlite = await backtest(fleet);
        let pg = await backtest(onPg);
        for (let again = 0; again < 5 && pg.from_seq !== sqlite.from_seq; again++) {
          sqlite = await backtest(fleet);
          pg = await backtest(onPg);
        }
        expect(pg, file).toEqual(sqlite);
        fired += (sqlite.fires as unknown[]).length;
      }
      expect(fired).toBeGreaterThan(0);
    } finally {
      await onPg.dispose();
    }
  }, 180_000);

  it("prints each table's rows on both sides and the verification", async () => {
    const db = await freshPgDatabase("store_copy_cli_text");
    const r = await fleet.cli(["store", "copy", "--from", fleet.storePath, "--to", urlOf(db)]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^copied .* to postgresql .* in \d+\.\d s$/);
    expect(lines[1]).toMatch(/^TABLE\s+SQLITE\s+POSTGRESQL$/);
    expect(lines.find((l) => l.startsWith("rule_fires "))).toMatch(/^rule_fires\s+(\d+)\s+\1$/);
    expect(lines.at(-1)).toBe("verified: every row of every table is equal on both sides");
  }, 120_000);

  it("refuses a missing --to, a URL of another scheme, a PATH beside --from and a password file others can read, as usage errors", async () => {
    const none = await fleet.cli(["store", "copy", "--from", fleet.storePath]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--to URL is required");
    const mysql = await fleet.cli(["store", "copy", "--from", fleet.storePath, "--to", "mysql://h/db"]);
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).toContain("--to mysql: is not postgresql:");
    const positional = await fleet.cli(["store", "copy", fleet.storePath, "--to", "postgresql://u@h/db"]);
    expect(positional.code).toBe(2);
    expect(positional.stderr).toContain("takes --from PATH and --to URL, not a PATH of its own");
    const backup = await fleet.cli(["store", "backup"]);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain("harness store backup: PATH is required");
    const file = path.join(fleet.root, "pg-password");
    fs.writeFileSync(file, "secret\n", { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const open = await fleet.cli([
      "store",
      "copy",
      "--from",
      fleet.storePath,
      "--to",
      "postgresql://u@h/db",
      "--password-file",
      file,
    ]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(`--password-file: ${file} is readable by group or others`);
  });
});
