/**
 * The daemon on PostgreSQL (issue 34): `harness daemon` with `[store] url` admits, evaluates and acts
 * as it does on SQLite; a second daemon on the same database is refused naming the first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { evaluatorCursor, fires, lastRow } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { freshPgDatabase } from "../store/pg/pg-store.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const closed = (harness: string, n: number) => ({
  kind: "run_event",
  event: { type: "closed", harness, run: `${harness}#${n}`, outcome: "budget_exceeded", cause_digest: "" },
});

describe("the daemon on PostgreSQL", () => {
  it("admits, evaluates and notifies as on SQLite", async () => {
    const f = new TestFleet({
      pg: await freshPgDatabase("pg_daemon"),
      enforce: ["budget-exhaustion-recurring"],
    });
    fleets.push(f);
    const started = await f.start();
    expect(started).toMatch(/harness daemon: store postgresql /);
    const client = journalClient(
      { socketPath: f.socketPath },
      await readTokenFile(f.tokens.get("ledger") as string),
    );
    const res = await client.append({ events: [closed("impl", 1), closed("impl", 2), closed("impl", 3)] });
    expect(res.results.map((r) => r.result.case)).toEqual(["admitted", "admitted", "admitted"]);
    await f.until(() => evaluatorCursor(f) === lastRow(f).seq, "the evaluation");
    expect(fires(f, { rule: "budget-exhaustion-recurring" }).length).toBeGreaterThan(0);
    await f.until(() => f.delivered().some((d) => d.event === "rule_fired"), "the notify hook");
    await f.stop();
  });
});
