/**
 * Several daemons on one PostgreSQL database (issue 35, decision 0022), real `harness daemon` processes:
 * every daemon admits, one leads (evaluates and acts); when the leader is killed (kill -9) another
 * takes over from the stored cursor within the lease, and nothing admitted is lost, evaluated twice or
 * acted on twice.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { PG_SCHEMA_VERSION } from "../../../src/shell/store/pg/pg-schema.js";
import { actions, evaluatorCursor, fires, holds, journalCount, lastRow } from "../../support/store-reads.js";
import { makeRepo, rowsOf, runHook } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { type FleetOptions, TestFleet } from "../daemon-harness.js";
import { freshPgDatabase, setSchemaVersion } from "../store/pg/pg-store.js";

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

/** Two daemons on one database: the first started leads, the second follows. */
async function leaderAndFollower(options: FleetOptions): Promise<[TestFleet, TestFleet]> {
  const a = new TestFleet(options);
  const b = new TestFleet(options);
  fleets.push(a, b);
  await a.start();
  await b.start();
  await b.until(() => /this daemon follows/.test(b.daemonStdout), "the second daemon to follow");
  return [a, b];
}

/** The daemon's /metrics, as its start line names it. */
const metricsOf = async (f: TestFleet): Promise<string> => {
  const url = /metrics (http:[^\s,]+)/.exec(f.daemonStderr)?.[1];
  if (url === undefined) throw new Error(`no metrics url in ${f.daemonStderr}`);
  return (await fetch(url)).text();
};

/** `harness doctor --json`'s leader row. */
const leaderRow = async (f: TestFleet) => {
  const r = await f.cli(["doctor", "--json"]);
  const checks = JSON.parse(r.stdout).checks as { name: string; status: string; detail: string }[];
  return checks.find((c) => c.name === "leader");
};

const firedNotifies = (f: TestFleet) =>
  f
    .delivered()
    .filter((d) => d.event === "rule_fired")
    .map((d) => d.fire_id as string);

describe("several daemons on one database", () => {
  it("every daemon admits and one leads; the leader killed, another takes over from the stored cursor, losing and repeating nothing", async () => {
    const db = await freshPgDatabase("pg_failover");
    const options = { pg: db, store: ['lease = "2s"'], enforce: ["budget-exhaustion-recurring"] };
    const [a, b] = await leaderAndFollower(options);
    expect(a.daemonStdout).not.toMatch(/this daemon follows/);

    // Admitted by the follower, evaluated and acted on by the leader.
    await appendVia(b, [closed("impl", 1), closed("impl", 2), closed("impl", 3)]);
    await a.until(() => evaluatorCursor(a) === lastRow(a).seq, "the leader's evaluation");
    const before = fires(a, { rule: "budget-exhaustion-recurring" });
    expect(before.length).toBeGreaterThan(0);
    await a.until(() => firedNotifies(a).length === before.length, "the leader's notify hook");
    expect(firedNotifies(b)).toEqual([]);

    // doctor and /metrics say which daemon leads, since when, and its epoch.
    const aName = `harness daemon \\(pid ${a.pid} on [^)]+\\)`;
    expect(await leaderRow(a)).toMatchObject({
      status: "pass",
      detail: expect.stringMatching(/^this daemon leads \(epoch 1, since \d{4}-/),
    });
    expect(await leaderRow(b)).toMatchObject({
      status: "pass",
      detail: expect.stringMatching(
        new RegExp(`^${aName} leads \\(epoch 1, since .*\\); this daemon follows$`),
      ),
    });
    expect(await metricsOf(a)).toMatch(/^harness_rule_leading 1$/m);
    const followerMetrics = await metricsOf(b);
    expect(followerMetrics).toMatch(/^harness_rule_leading 0$/m);
    expect(followerMetrics).toMatch(/^harness_rule_leader_epoch 1$/m);
    expect(followerMetrics).toMatch(new RegExp(`^harness_rule_leader_info\\{leader="${aName}"\\} 1$`, "m"));

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
    expect(await leaderRow(b)).toMatchObject({
      status: "pass",
      detail: expect.stringMatching(/^this daemon leads \(epoch 2, /),
    });

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
      store: ['lease = "2s"'],
      enforce: ["budget-exhaustion-recurring"],
      config: '[agents]\nlisten = ""',
    };
    const [a, b] = await leaderAndFollower(options);
    // The leader holds impl over rows the follower admitted; the follower's hook answers with the hold.
    await appendVia(b, [closed("impl", 1), closed("impl", 2)]);
    await b.until(() => holds(b, { harness: "impl", inForce: true }).length === 1, "the hold on impl");
    const held = claudeCode(repo, "sess-held");
    const denied = await runHook(b, "claude-code", JSON.stringify(held.PreToolUse));
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    // A hold is released by the leader: a follower asked refuses, naming it.
    const cleared = await b.cli(["rules", "clear", "impl"]);
    expect(cleared.code).toBe(4);
    expect(cleared.stderr).toMatch(
      /clear impl: this daemon does not lead \(harness daemon \(pid \d+ on [^)]+\) leads \(epoch 1\)\); ask the leading daemon/,
    );

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

  it("a leader paused past its lease (SIGSTOP) is fenced out when it wakes: it commits and starts nothing, and the action records stay truthful", async () => {
    const db = await freshPgDatabase("pg_failover_paused");
    const options = {
      pg: db,
      store: ['lease = "2s"'],
      enforce: ["budget-exhaustion-recurring"],
      // Marks its start, works a second, then records: it runs on while its daemon is paused.
      notifyHook: "mark-then-record",
    };
    const [a, b] = await leaderAndFollower(options);
    await appendVia(b, [closed("impl", 1), closed("impl", 2), closed("impl", 3)]);
    // Paused as soon as its notify hook has started: the action is recorded started.
    await a.until(() => fs.readdirSync(a.deliveries).some((f) => f.endsWith(".started")), "the hook's start");
    a.signal("SIGSTOP");
    const [fire] = fires(b, { rule: "budget-exhaustion-recurring" });
    if (fire === undefined) throw new Error("no fire");
    // The follower takes over once the lease lapses and settles the started action: it may have run.
    await b.until(() => /this daemon leads/.test(b.daemonStdout), "the follower to take over", 20_000);
    // Settled unknown: it may have run (the old leader is paused; its hook goes on).
    await b.until(
      () => actions(b, { fireId: fire.fire_id })[0]?.state === "unknown",
      "the action settled unknown",
      30_000,
    );
    await appendVia(b, [closed("nightly", 1), closed("nightly", 2), closed("nightly", 3)]);
    await b.until(
      () => fires(b, { rule: "budget-exhaustion-recurring" }).some((f) => f.harness === "nightly"),
      "the new leader's fire",
    );
    // Woken, the old leader finds its lease gone: it follows, and commits nothing more.
    const cursorBefore = evaluatorCursor(b);
    a.signal("SIGCONT");
    await a.until(
      () => /this daemon no longer leads/.test(a.daemonStdout),
      "the old leader to follow",
      20_000,
    );
    await b.until(() => firedNotifies(b).length === 1, "the new leader's notify");
    await a.until(() => firedNotifies(a).length === 1, "the old leader's hook to finish");
    // The hook it had started ran once, and its result is recorded over unknown: truthful.
    await b.until(() => actions(b, { fireId: fire.fire_id })[0]?.state === "ok", "the old hook's result");
    const all = fires(b, { rule: "budget-exhaustion-recurring" });
    expect(new Set(all.map((f) => f.fire_id)).size).toBe(all.length);
    const delivered = [...firedNotifies(a), ...firedNotifies(b)].sort();
    expect(delivered).toEqual(all.map((f) => f.fire_id).sort());
    expect(journalCount(b, { kind: "run_event" })).toBe(6);
    expect(evaluatorCursor(b)).toBeGreaterThanOrEqual(cursorBefore);
    expect(await leaderRow(a)).toMatchObject({
      detail: expect.stringMatching(/leads \(epoch 2, .*\); this daemon follows$/),
    });
  }, 120_000);

  it("A daemon with an older schema version refuses to lead, named in doctor", async () => {
    const db = await freshPgDatabase("pg_failover_schema");
    const a = new TestFleet({ pg: db, store: ['lease = "2s"'] });
    fleets.push(a);
    await a.start();
    expect(await leaderRow(a)).toMatchObject({ status: "pass" });
    // A newer harness migrated the database: this daemon is now the older one.
    await setSchemaVersion(db, PG_SCHEMA_VERSION + 1);
    await a.until(() => /this daemon no longer leads/.test(a.daemonStdout), "the daemon to stop leading");
    const row = await leaderRow(a);
    expect(row?.status).toBe("fail");
    expect(JSON.stringify(row)).toContain(
      `the database's schema version ${PG_SCHEMA_VERSION + 1} differs from this daemon's (${PG_SCHEMA_VERSION}): it does not lead; upgrade this daemon`,
    );
    await setSchemaVersion(db, PG_SCHEMA_VERSION);
    await a.until(() => /"epoch":2,.*this daemon leads/.test(a.daemonStdout), "the daemon to lead again");
  }, 60_000);

  it("a token minted on one daemon is in force on the others at once, and one revoked there is refused everywhere", async () => {
    const db = await freshPgDatabase("pg_failover_tokens");
    const options = { pg: db, store: ['lease = "2s"'] };
    const [a, b] = await leaderAndFollower(options);
    const file = path.join(a.root, "minted.token");
    const made = await a.cli(["token", "create", "--producer", "ledger", "--out", file, "--json"]);
    expect(made.code, made.stderr).toBe(0);
    const { id } = JSON.parse(made.stdout) as { id: string };
    const append = (f: TestFleet) =>
      f.cli(
        ["journal", "append", "--token-file", file],
        `${JSON.stringify({ kind: "run_event", ...closed("minted", 1).event })}\n`,
      );
    // Told over the database: in force on the follower well before its periodic reread (10 s).
    const started = Date.now();
    let admitted = await append(b);
    while (admitted.code !== 0 && Date.now() - started < 5_000) admitted = await append(b);
    expect(admitted.code, admitted.stderr).toBe(0);
    const revoked = await b.cli(["token", "revoke", id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    let refused = await append(a);
    while (refused.code === 0 && Date.now() - started < 10_000) refused = await append(a);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/permission_denied|unauthenticated/);
  }, 60_000);
});
