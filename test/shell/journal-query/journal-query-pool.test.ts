/**
 * The journal query pool's bounds (issue 26, finding 5), on the built module so its worker runs as the
 * daemon's does: the event loop keeps turning while a scan runs; a caller's third call is refused at
 * once; past the waiting queue a call is refused at once; a caller's mistake comes back as the
 * InvalidArgumentError the code would throw in process; a window over the bound is refused by its
 * index count.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../dist/shell/errors.js";
import { MAX_COUNT_ROWS } from "../../../dist/shell/journal-query/journal-queries.js";
import {
  JournalQueryPool,
  MAX_QUERIES_PER_CALLER,
  MAX_WAITING_QUERIES,
  QUERY_WORKERS,
} from "../../../dist/shell/journal-query/journal-query-pool.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-query-pool-"));
const file = path.join(root, "harness.db");
let pool: JournalQueryPool;
const refused: string[] = [];

beforeAll(() => {
  const store = openStore(file, "pool test");
  const journal = new JournalTable(store.db);
  const at = Date.now();
  store.db.transaction(() => {
    for (let i = 0; i < MAX_COUNT_ROWS + 10; i++)
      journal.append({
        kind: "run_event",
        source: "observer",
        at: at + i,
        event: { type: "tool", harness: `h${i % 7}`, run: `h${i % 7}#1`, tool: "Bash", action: "exec" },
      });
  })();
  store.close();
  pool = new JournalQueryPool({ backend: "sqlite", path: file }, (reason) => refused.push(reason));
}, 60_000);

afterAll(async () => {
  await pool.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const busy = (e: unknown) => e instanceof ConnectError && e.code === Code.ResourceExhausted;

describe("finding 5: the journal query pool", () => {
  it("answers from a worker: the event loop turns while the scan runs", async () => {
    let turns = 0;
    let done = false;
    const spin = (): void => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    spin();
    const answer = await pool.count({ selector: [["harness", "h1"]], within: "1h" });
    done = true;
    expect(answer.number).toBeGreaterThan(7000);
    expect(turns).toBeGreaterThan(1);
  });

  it("refuses a window over the bound from its index count, as the same InvalidArgumentError", async () => {
    const e = await pool.count({ selector: [["tool", "Bash"]], within: "168h" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as Error).message).toMatch(/more than 50,000 run_event rows/);
  });

  it(`refuses a caller's call ${MAX_QUERIES_PER_CALLER + 1} at once, RESOURCE_EXHAUSTED; another caller is served`, async () => {
    const session = {};
    const calls = Array.from({ length: MAX_QUERIES_PER_CALLER + 1 }, () =>
      pool.query({ type: "tool", limit: 5 }, undefined, session).then(
        () => "answered",
        (e: unknown) => (busy(e) ? "busy" : String(e)),
      ),
    );
    const other = await pool.query({ type: "tool", limit: 5 }, undefined, {});
    expect(other.rows).toHaveLength(5);
    expect(await Promise.all(calls)).toEqual([...Array(MAX_QUERIES_PER_CALLER).fill("answered"), "busy"]);
    expect(refused).toContain("caller_busy");
  });

  it(`refuses at once past ${QUERY_WORKERS} running and ${MAX_WAITING_QUERIES} waiting`, async () => {
    const n = QUERY_WORKERS + MAX_WAITING_QUERIES + 1;
    const calls = Array.from({ length: n }, () =>
      pool.count({ selector: [["harness", "h2"]], within: "1h" }).then(
        () => "answered",
        (e: unknown) => (busy(e) ? "busy" : String(e)),
      ),
    );
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o === "answered")).toHaveLength(n - 1);
    expect(outcomes.at(-1)).toBe("busy");
    expect(refused).toContain("queue_full");
  }, 60_000);
});
