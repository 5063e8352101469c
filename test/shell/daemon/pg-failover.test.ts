/**
 * Several daemons on one PostgreSQL database (issue 35, decision 0022), real `harness daemon` processes:
 * every daemon admits, one leads (evaluates and acts); when the leader is killed (kill -9) another
 * takes over from the stored cursor within the lease, and nothing admitted is lost, evaluated twice or
 * acted on twice.
 */
import * as fs from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { actions, evaluatorCursor, fires, holds, journalCount, lastRow } from "../../support/store-reads.js";
import { makeRepo, rowsOf, runHook } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { TestFleet } from "../daemon-harness.js";
import { freshPgDatabase } from "../store/pg/pg-store.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});
const repo = makeRepo();
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

const closed = (harness: string, n: number) => ({
  kind: "run_event",
  event: { type: "closed", harness, run: `${harness}#${n}`, outcome: "budget_exceeded", cause_digest: "" },
});

const appendVia = async (f: TestFleet, events: readonly ReturnType<typeof closed>[]) => {
  const client = journalClient(
    { socketPath: f.socketPath },
    await readTokenFile(f.tokens.get("ledger") as string),
  );
  const res = await client.append({ events: [...events] });
  expect(res.results.map((r) => r.result.case)).toEqual(events.map(() => "admitted"));
};

const firedNotifies = (f: TestFleet) =>
  f
    .delivered()
    .filter((d) => d.event === "rule_fired")
    .map((d) => d.fire_id as string);

describe("several daemons on one database", () => {
  it("every daemon admits and one leads; the leader killed, another takes over from the stored cursor, losing and repeating nothing", async () => {
    const db = await freshPgDatabase("pg_failover");
    const options = { pg: db, store: ['lease = "1s"'], enforce: ["budget-exhaustion-recurring"] };
    const a = new TestFleet(options);
    const b = new TestFleet(options);
    fleets.push(a, b);
    await a.start();
    await b.start();
    await b.until(() => /this daemon follows/.test(b.daemonStdout), "the second daemon to follow");
    expect(a.daemonStdout).not.toMatch(/this daemon follows/);

    // Admitted by the follower, evaluated and acted on by the leader.
    await appendVia(b, [closed("impl", 1), closed("impl", 2), closed("impl", 3)]);
    await a.until(() => evaluatorCursor(a) === lastRow(a).seq, "the leader's evaluation");
    const before = fires(a, { rule: "budget-exhaustion-recurring" });
    expect(before.length).toBeGreaterThan(0);
    await a.until(() => firedNotifies(a).length === before.length, "the leader's notify hook");
    expect(firedNotifies(b)).toEqual([]);

    // kill -9: the follower takes over once the lease lapses, from the stored cursor.
    await a.kill();
    const killedAt = Date.now();
    await appendVia(b, [closed("nightly", 1), closed("nightly", 2), closed("nightly", 3)]);
    await b.until(
      () => fires(b, { rule: "budget-exhaustion-recurring" }).some((f) => f.harness === "nightly"),
      "the new leader's evaluation",
      20_000,
    );
    console.log(`takeover: the first fire after kill -9 came ${Date.now() - killedAt} ms after it`);
    await b.until(() => /this daemon leads/.test(b.daemonStdout), "the new leader's log line");
    await b.until(() => evaluatorCursor(b) === lastRow(b).seq, "the new leader to catch up");

    // Nothing lost or evaluated twice; every action once, by one daemon.
    expect(journalCount(b, { kind: "run_event" })).toBe(6);
    const all = fires(b, { rule: "budget-exhaustion-recurring" });
    expect(new Set(all.map((f) => f.fire_id)).size).toBe(all.length);
    expect(all.filter((f) => f.harness === "impl")).toEqual(before);
    await b.until(() => firedNotifies(b).length > 0, "the new leader's notify hook");
    const delivered = [...firedNotifies(a), ...firedNotifies(b)];
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered.sort()).toEqual(all.map((f) => f.fire_id).sort());
    expect(actions(b).map((x) => x.state)).toEqual(all.map(() => "ok"));
  }, 120_000);

  it("Hooks through a follower during a failover: answered by the leader's holds, each within its budget, none admitted twice", async () => {
    const db = await freshPgDatabase("pg_failover_hooks");
    const options = {
      pg: db,
      store: ['lease = "1s"'],
      enforce: ["budget-exhaustion-recurring"],
      config: '[agents]\nlisten = ""',
    };
    const a = new TestFleet(options);
    const b = new TestFleet(options);
    fleets.push(a, b);
    await a.start();
    await b.start();
    await b.until(() => /this daemon follows/.test(b.daemonStdout), "the second daemon to follow");
    // The leader holds impl over rows the follower admitted; the follower's hook answers with the hold.
    await appendVia(b, [closed("impl", 1), closed("impl", 2)]);
    await b.until(() => holds(b, { harness: "impl", inForce: true }).length === 1, "the hold on impl");
    const held = claudeCode(repo, "sess-held");
    const denied = await runHook(b, "claude-code", JSON.stringify(held.PreToolUse));
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });

    // The leader killed; hook calls go on through the follower as it takes over.
    await a.kill();
    const sessions = Array.from({ length: 8 }, (_, i) => claudeCode(repo, `sess-failover-${i}`));
    const started = Date.now();
    const answers = await Promise.all(
      sessions.flatMap((p) => [
        runHook(b, "claude-code", JSON.stringify(p.PreToolUse)),
        runHook(b, "claude-code", JSON.stringify(p.PostToolUse)),
      ]),
    );
    console.log(
      `16 hook calls through the follower during the failover answered in ${Date.now() - started} ms`,
    );
    for (const [i, r] of answers.entries()) {
      expect(r.code, r.stderr).toBe(0);
      // Every PreToolUse is refused: the hold survives the handover.
      if (i % 2 === 0) expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    }
    await b.until(() => /this daemon leads/.test(b.daemonStdout), "the follower to take over", 20_000);
    await b.until(() => evaluatorCursor(b) === lastRow(b).seq, "the new leader to catch up");
    for (const [i] of sessions.entries())
      expect(rowsOf(b, `sess-failover-${i}`).filter((r) => r.type === "tool")).toHaveLength(1);
    expect(holds(b, { harness: "impl", inForce: true })).toHaveLength(1);
  }, 120_000);
});
