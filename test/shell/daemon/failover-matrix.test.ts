/**
 * The failover matrix (issue 35): the crash matrix's scenarios with two or three daemons on one
 * PostgreSQL database, the leader killed with SIGKILL at each point of evaluation, commit, action and
 * derivation. The batches go through a follower, which takes over (or another does) from the stored
 * cursor once the lease lapses. After: fires equal a fold of the core over the admitted rows, no fire is
 * acted on twice by any daemon, every action the dead leader never started is recorded undelivered and
 * every one it started unknown; the takeover time is printed. The same with the leader paused (SIGSTOP)
 * past its lease and woken after the takeover, and killed mid-backtest. `npm test` runs one point of each
 * kind and one pause with two daemons; the soak every point at every reach, and a pause after every
 * batch, with two and with three.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeRepo } from "../agents/hook-harness.js";
import { type FleetOptions, TestFleet } from "../daemon-harness.js";
import { freshPgDatabase } from "../store/pg/pg-store.js";
import {
  BASE_SEED,
  type Batch,
  batchesFor,
  expectNothingLostOrRepeated,
  SCENARIOS,
  SOAK,
  send,
  settled,
} from "./crash-parts.js";

/** The leader admits nothing here (the batches go through a follower): admission's points are the crash matrix's. */
const LEADER_POINTS = new Set([
  "eval.beforeCommit",
  "eval.afterCommit",
  "action.beforeStart",
  "action.afterStart",
  "action.afterRun",
  "derive.beforeCommit",
  "derive.afterCommit",
]);
/** `npm test`'s subset: one point of each kind. */
const SUBSET = new Set(["eval.afterCommit", "action.afterStart", "action.afterRun", "derive.afterCommit"]);
const DAEMONS = SOAK ? [2, 3] : [2];
const NTH = SOAK ? [1, 2, 3] : [1];

const STARTER_RULES = fileURLToPath(new URL("../../../starter-rules/", import.meta.url));

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

let repo: string;
beforeAll(() => {
  repo = makeRepo();
});
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

/** When the daemon's log says it took the lead, ms since the epoch. */
const ledAt = (f: TestFleet): number | undefined => {
  const line = f.daemonStdout.split("\n").find((l) => l.includes("this daemon leads"));
  return line === undefined ? undefined : Date.parse((JSON.parse(line) as { time: string }).time);
};

/**
 * `daemons` daemons on one database, the first started (with `leaderEnv`) leading once the others
 * follow: the leader first.
 */
async function startDaemons(
  options: FleetOptions,
  daemons: number,
  leaderEnv: NodeJS.ProcessEnv = {},
): Promise<[TestFleet, ...TestFleet[]]> {
  const leader = new TestFleet(options);
  fleets.push(leader);
  await leader.start(leaderEnv);
  await leader.until(() => ledAt(leader) !== undefined, "the first daemon to lead");
  const all: [TestFleet, ...TestFleet[]] = [leader];
  for (let i = 1; i < daemons; i++) {
    const f = new TestFleet(options);
    fleets.push(f);
    all.push(f);
    await f.start();
    await f.until(() => /this daemon follows/.test(f.daemonStdout), "a daemon to follow");
  }
  return all;
}

describe.each(SCENARIOS.map((sc, index) => ({ ...sc, index })))("failover matrix, $name", (sc) => {
  const points = sc.points.filter((p) => LEADER_POINTS.has(p) && (SOAK || SUBSET.has(p)));
  for (const daemons of DAEMONS)
    for (const point of points)
      for (const nth of NTH.filter((n) => n <= (sc.maxNth ?? Number.POSITIVE_INFINITY)))
        it(`the leader of ${daemons} killed at ${point}@${nth}: no evaluation lost, no action repeated`, async () => {
          const seed = BASE_SEED * 1_000 + sc.index * 100 + sc.points.indexOf(point) * 10 + nth;
          const batches = sc.ordered === true ? sc.batches : batchesFor(sc.batches, seed);
          if (SOAK)
            console.log(`failover matrix, ${daemons} daemons, ${sc.name}, ${point}@${nth}: seed ${seed}`);
          const options = {
            enforce: sc.enforce,
            ...(sc.rules === undefined ? {} : { rules: sc.rules, recordStops: true }),
            pg: await freshPgDatabase(`failover_${sc.index}_${daemons}_${nth}`),
            store: ['lease = "2s"'],
          };
          const [leader, ...followers] = await startDaemons(options, daemons, {
            HARNESS_FAILPOINTS: `${point}@${nth}`,
          });
          const via = followers[0] as TestFleet;
          let next = 0;
          while (next < batches.length && leader.running) {
            expect(await send(via, batches[next] as Batch, repo), "a follower admits the batch").toBe(true);
            next++;
            await leader
              .until(() => !leader.running || settled(leader), "the batch's evaluation")
              .catch(() => undefined);
          }
          expect(leader.running, `the failpoint ${point}@${nth} was reached`).toBe(false);
          const diedAt = Date.now();
          for (; next < batches.length; next++)
            expect(await send(via, batches[next] as Batch, repo)).toBe(true);
          // Each poll copies the store (about 0.3 s, more on loaded cores).
          await via.until(() => settled(via), "evaluation after the takeover", 30_000);
          // The log line may still be in its pipe while the store already shows the takeover.
          await via.until(() => followers.some((f) => ledAt(f) !== undefined), "a follower's lead");
          const taker = followers.find((f) => ledAt(f) !== undefined);
          console.log(
            `failover matrix, ${daemons} daemons, ${sc.name}, ${point}@${nth}: took over ${(ledAt(taker as TestFleet) as number) - diedAt} ms after the kill was seen (lease 2 s)`,
          );
          for (const f of followers) await f.stop();
          expectNothingLostOrRepeated(sc, point, { storePath: via.storePath }, [leader, ...followers]);
        });
});

/** `npm test` pauses the leader once (the stop rule's scenario, after its second batch); the soak after every batch. */
const PAUSES = (sc: (typeof SCENARIOS)[number], index: number): readonly number[] =>
  SOAK ? sc.batches.map((_, i) => i + 1) : index === 1 ? [2] : [];

describe.each(
  SCENARIOS.map((sc, index) => ({ ...sc, index })).filter((sc) => PAUSES(sc, sc.index).length > 0),
)("failover matrix, $name, the leader paused", (sc) => {
  for (const daemons of DAEMONS)
    for (const after of PAUSES(sc, sc.index))
      it(`the leader of ${daemons} paused (SIGSTOP) past its lease after batch ${after}, then woken: no evaluation lost, no action repeated, records truthful`, async () => {
        const seed = BASE_SEED * 1_000 + sc.index * 100 + 90 + after;
        const batches = sc.ordered === true ? sc.batches : batchesFor(sc.batches, seed);
        if (SOAK)
          console.log(`failover matrix, ${daemons} daemons, ${sc.name}, paused after ${after}: seed ${seed}`);
        const options = {
          enforce: sc.enforce,
          ...(sc.rules === undefined ? {} : { rules: sc.rules, recordStops: true }),
          pg: await freshPgDatabase(`paused_${sc.index}_${daemons}_${after}`),
          store: ['lease = "2s"'],
        };
        const [leader, ...followers] = await startDaemons(options, daemons);
        const via = followers[0] as TestFleet;
        const sendAll = async (from: number, to: number) => {
          for (const batch of batches.slice(from, to))
            expect(await send(via, batch, repo), "a follower admits the batch").toBe(true);
        };
        await sendAll(0, after);
        await leader.until(() => settled(leader), "the leader's evaluation", 30_000);
        leader.signal("SIGSTOP");
        const pausedAt = Date.now();
        // Rows the paused leader cannot evaluate: a follower takes over past the lease and does.
        await sendAll(after, after + 1);
        await via.until(() => followers.some((f) => ledAt(f) !== undefined), "a follower's lead", 30_000);
        await via.until(() => settled(via), "evaluation after the takeover", 30_000);
        const taker = followers.find((f) => ledAt(f) !== undefined) as TestFleet;
        console.log(
          `failover matrix, ${daemons} daemons, ${sc.name}, paused after ${after}: took over ${(ledAt(taker) as number) - pausedAt} ms after the pause (lease 2 s)`,
        );
        leader.signal("SIGCONT");
        await leader.until(
          () => /this daemon no longer leads/.test(leader.daemonStdout),
          "the woken leader to follow",
          30_000,
        );
        await sendAll(after + 1, batches.length);
        await via.until(() => settled(via), "the rest's evaluation", 30_000);
        for (const f of [leader, ...followers]) await f.stop();
        expectNothingLostOrRepeated(sc, "paused", { storePath: via.storePath }, [leader, ...followers]);
      });
});

describe("failover matrix, mid-backtest", () => {
  it("the leader killed while a backtest replays: the backtest is asked again of the follower, which takes over; nothing lost or repeated", async () => {
    const sc = SCENARIOS[0] as (typeof SCENARIOS)[number];
    const options = {
      enforce: sc.enforce,
      pg: await freshPgDatabase("failover_backtest"),
      store: ['lease = "2s"'],
    };
    const [leader, follower] = (await startDaemons(options, 2, {
      HARNESS_FAILPOINTS: "backtest.running",
    })) as [TestFleet, TestFleet];
    const half = Math.ceil(sc.batches.length / 2);
    for (const batch of sc.batches.slice(0, half)) expect(await send(follower, batch, repo)).toBe(true);
    await leader.until(() => settled(leader), "the leader's evaluation", 30_000);
    const rule = path.join(STARTER_RULES, "budget-exhaustion-recurring.toml");
    const lost = await leader.cli(["rules", "backtest", rule, "--json"]);
    expect(lost.code, lost.stdout).not.toBe(0);
    expect(await leader.exited()).not.toBe(0);
    const again = await follower.cli(["rules", "backtest", rule, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    for (const batch of sc.batches.slice(half)) expect(await send(follower, batch, repo)).toBe(true);
    await follower.until(() => settled(follower), "evaluation after the takeover", 30_000);
    await follower.until(() => ledAt(follower) !== undefined, "the follower's lead");
    await follower.stop();
    expectNothingLostOrRepeated(sc, "backtest.running", { storePath: follower.storePath }, [
      leader,
      follower,
    ]);
  });
});
