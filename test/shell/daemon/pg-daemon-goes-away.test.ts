/**
 * Issue 34 item 4, with the real daemon: its PostgreSQL server crashes (as a host losing power stops it)
 * while producers append and agents call their hooks, and comes back. Meanwhile producers get a
 * retryable error (UNAVAILABLE), an agent's PreToolUse is answered by its fail mode (open: allowed) and
 * its other calls wait in their spool, `harness doctor` fails naming the database, and the daemon keeps
 * running. Once the server is back the daemon resumes by itself: every acknowledged Append is in the
 * journal exactly once (producers retry with their keys), seqs have no gap, `at` never goes back, the
 * evaluator catches up, and doctor's store row passes again. A server that takes connections but
 * never answers (frozen) is an error within `[store] query_timeout`, not a wait without end.
 */
import * as fs from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { type OwnCluster, ownCluster } from "../../support/pg-own-cluster.js";
import { coreRows, evaluatorCursor, lastRow } from "../../support/store-reads.js";
import { makeRepo, runHook } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { TestFleet } from "../daemon-harness.js";

let cluster: OwnCluster;
let repo: string;
beforeAll(() => {
  cluster = ownCluster();
  repo = makeRepo();
}, 120_000);
afterAll(() => {
  // A test that timed out while the server was frozen never reached its thaw.
  try {
    cluster?.thaw();
  } catch {
    // Not running: nothing to thaw.
  }
  cluster?.remove();
  fs.rmSync(repo, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the daemon's database goes away and comes back", () => {
  it("loses no acknowledged row, answers producers UNAVAILABLE and hooks by their fail mode meanwhile, and resumes by itself", async () => {
    const f = new TestFleet({
      pg: { host: cluster.options.host as string, user: "postgres", database: "postgres" },
    });
    try {
      await f.start();
      const client = journalClient(
        { socketPath: f.socketPath },
        await readTokenFile(f.tokens.get("ledger") as string),
      );
      const acked = new Set<number>();
      const codes = new Set<Code>();
      let stop = false;
      // A producer appending keyed batches throughout, each retried with its key until acknowledged.
      const producer = (async () => {
        for (let b = 0; !stop; b++) {
          const events = [0, 1].map((i) => ({
            kind: "run_event",
            event: { type: "opened", harness: "p", run: `p#${b}-${i}`, trigger: "schedule" },
          }));
          for (;;) {
            try {
              const r = await client.append({ events, idempotencyKey: `batch-${b}` });
              expect(r.results.map((x) => x.result.case)).toEqual(["admitted", "admitted"]);
              acked.add(b);
              break;
            } catch (e) {
              codes.add(ConnectError.from(e).code);
              await sleep(100);
            }
          }
          await sleep(20);
        }
      })();
      await sleep(800);
      cluster.crash();
      await sleep(1_500);
      // While the database is away.
      const hooks = claudeCode(repo, "away");
      const pre = await runHook(f, "claude-code", JSON.stringify(hooks.PreToolUse));
      expect(pre.code, pre.stderr).toBe(0);
      expect(pre.stdout, "PreToolUse answered by the fail mode: allowed").toBe("");
      const post = await runHook(f, "claude-code", JSON.stringify(hooks.PostToolUse));
      expect(post.code, post.stderr).toBe(0);
      const doctor = await f.cli(["doctor"]);
      expect(doctor.code, doctor.stdout + doctor.stderr).not.toBe(0);
      expect(doctor.stdout + doctor.stderr).toContain(
        `postgresql ${cluster.options.host as string}/postgres`,
      );
      // The daemon answers and says its store fails; doctor's own probe of the database fails too.
      expect(doctor.stdout).toMatch(/^PASS +daemon/m);
      expect(doctor.stdout).toMatch(/^FAIL +store +postgresql \S+: cannot use the database: connect ENOENT/m);
      expect(doctor.stdout).toMatch(/fail: the daemon cannot write postgresql /);
      expect(f.running, "the daemon keeps running without its database").toBe(true);
      const ackedWhileAway = acked.size;
      await sleep(1_000);
      expect(acked.size, "nothing is acknowledged while the database is away").toBe(ackedWhileAway);
      cluster.start();
      // Resumed by itself: the producer's retries are acknowledged again.
      await f.until(() => acked.size > ackedWhileAway + 3, "Appends acknowledged again", 30_000);
      stop = true;
      await producer;
      expect([...codes], "producers were told to retry").toContain(Code.Unavailable);
      await f.until(
        () => {
          const at = { storePath: f.storePath };
          return evaluatorCursor(at) === lastRow(at).seq;
        },
        "the evaluator caught up",
        30_000,
      );
      const rows = coreRows({ storePath: f.storePath });
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
      for (let i = 1; i < rows.length; i++)
        expect((rows[i]?.at as number) >= (rows[i - 1]?.at as number)).toBe(true);
      const opened = rows.filter((r) => r.event.harness === "p").map((r) => String(r.event.run));
      expect(new Set(opened).size, "no batch appended twice").toBe(opened.length);
      for (const b of acked) expect(opened, `batch ${b}`).toContain(`p#${b}-0`);
      const after = await f.cli(["doctor", "--json"]);
      const store = (JSON.parse(after.stdout) as { checks: { name: string; status: string }[] }).checks.find(
        (c) => c.name === "store",
      );
      expect(store?.status, after.stdout).toBe("pass");
      // The call spooled while the database was away is delivered by the next one, in order.
      const next = await runHook(f, "claude-code", JSON.stringify(hooks.UserPromptSubmit));
      expect(next.code, next.stderr).toBe(0);
      await f.until(
        () =>
          coreRows({ storePath: f.storePath }).some(
            (r) => r.event.type === "tool" && String(r.event.run).includes("away"),
          ),
        "the spooled PostToolUse in the journal",
      );
      await f.stop();
    } finally {
      await f.dispose();
    }
  }, 120_000);

  it("a server that takes connections but never answers (frozen) is an error in query_timeout, not a wait without end", async () => {
    const f = new TestFleet({
      pg: { host: cluster.options.host as string, user: "postgres", database: "postgres" },
      store: ['query_timeout = "2s"'],
    });
    try {
      await f.start();
      const client = journalClient(
        { socketPath: f.socketPath },
        await readTokenFile(f.tokens.get("ledger") as string),
      );
      const batch = (n: number) => ({
        events: [
          { kind: "run_event", event: { type: "opened", harness: "w", run: `w#${n}`, trigger: "schedule" } },
        ],
        idempotencyKey: `frozen-${n}`,
      });
      expect((await client.append(batch(0))).results[0]?.result.case).toBe("admitted");
      cluster.freeze();
      try {
        const asked = Date.now();
        const refused = await client.append(batch(1)).then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        const waited = Date.now() - asked;
        expect(refused?.code, "told to retry").toBe(Code.Unavailable);
        // query_timeout (2 s) on an open connection, or the 5 s connect bound on a new one, with room
        // for two loaded cores: far short of a wait without end.
        expect(waited).toBeLessThan(20_000);
        const hooks = claudeCode(repo, "frozen");
        const pre = await runHook(f, "claude-code", JSON.stringify(hooks.PreToolUse));
        expect(pre.code, pre.stderr).toBe(0);
        expect(pre.stdout, "PreToolUse answered by the fail mode: allowed").toBe("");
        expect(f.running).toBe(true);
      } finally {
        cluster.thaw();
      }
      // The retry with the same key is admitted once the server answers again.
      let admitted = false;
      for (let i = 0; i < 60 && !admitted; i++)
        admitted = await client.append(batch(1)).then(
          (r) => r.results[0]?.result.case === "admitted",
          () => false,
        );
      expect(admitted).toBe(true);
      const runs = coreRows({ storePath: f.storePath })
        .filter((r) => r.event.harness === "w")
        .map((r) => r.event.run);
      expect(runs).toEqual(["w#0", "w#1"]);
      await f.stop();
    } finally {
      await f.dispose();
    }
  }, 120_000);
});
