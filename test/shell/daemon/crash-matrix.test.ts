/**
 * The crash matrix (issue 5): a daemon killed with SIGKILL at each point between admission, evaluation,
 * commit and action, then restarted. After the restart, fires equal a fold of the core over the
 * admitted rows, no fire is acted on twice, every action that never started is recorded undelivered and
 * every one that started but was not seen to finish is recorded unknown. A stop decided on an agent's
 * attempt (its PreToolUse) is among them.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fold } from "../../../src/core/backtest.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { emptyState } from "../../../src/core/state.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { rawPost } from "../../../src/shell/agents/forwarder/raw-http.js";
import { inputDigest } from "../../../src/shell/agents/ingest/go-json-digest.js";
import {
  HOOK_PATH_PREFIX,
  LEDGER_TOKEN_HEADER,
  ROW_HEADER,
} from "../../../src/shell/agents/ingest/hook-limits.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import {
  coreRows,
  evaluatorCursor,
  fires,
  journalRows,
  lastRow,
  actions as recordedActions,
  toldFires,
} from "../../support/store-reads.js";
import { makeRepo, runHook } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { TestFleet } from "../daemon-harness.js";
import { freshPgDatabase } from "../store/pg/pg-store.js";
import { mountTmpfs, tmpfsUnavailable } from "../store/tmpfs.js";
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

const NTH = process.env.PROPERTY_RUNS_FACTOR === undefined ? [1, 3] : [1, 2, 3, 4, 5];

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

let repo: string;
beforeAll(() => {
  repo = makeRepo();
});
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));
/**
 * Both backends (issue 34): the daemon on PostgreSQL keeps the same promises. `npm test` runs each point's
 * first reach on PostgreSQL; the soak runs every point and reach on both.
 */
const BACKENDS = ["sqlite", "postgresql"] as const;
const nthsOn = (backend: (typeof BACKENDS)[number]): readonly number[] =>
  backend === "sqlite" || SOAK ? NTH : [1];

describe.each(BACKENDS.flatMap((backend) => SCENARIOS.map((sc) => ({ ...sc, backend }))))(
  "crash matrix on $backend, $name",
  (sc) => {
    for (const point of sc.points)
      for (const nth of nthsOn(sc.backend).filter((n) => n <= (sc.maxNth ?? Number.POSITIVE_INFINITY)))
        it(`a SIGKILL at ${point}@${nth} loses no evaluation and repeats no action`, async () => {
          const index = SCENARIOS.findIndex((x) => x.name === sc.name);
          const seed = BASE_SEED * 1_000 + index * 100 + sc.points.indexOf(point) * 10 + nth;
          const batches = sc.ordered === true ? sc.batches : batchesFor(sc.batches, seed);
          if (SOAK) console.log(`crash matrix on ${sc.backend}, ${sc.name}, ${point}@${nth}: seed ${seed}`);
          const f = new TestFleet({
            enforce: sc.enforce,
            ...(sc.rules === undefined ? {} : { rules: sc.rules, recordStops: true }),
            ...(sc.backend === "sqlite" ? {} : { pg: await freshPgDatabase(`crash_${index}_${nth}`) }),
          });
          fleets.push(f);
          await f.start({ HARNESS_FAILPOINTS: `${point}@${nth}` });
          let next = 0;
          while (next < batches.length && f.running) {
            const ok = await send(f, batches[next] as Batch, repo);
            if (ok || sc.projects !== true) next++;
            if (!ok) {
              await f.exited();
              break;
            }
            await f.until(() => !f.running || settled(f), "the batch's evaluation").catch(() => undefined);
          }
          const killed = !f.running;
          expect(killed, `the failpoint ${point}@${nth} was reached`).toBe(true);
          await f.stop();
          await f.start();
          for (; next < batches.length; next++)
            expect(await send(f, batches[next] as Batch, repo)).toBe(true);
          // Each poll on PostgreSQL copies the store (about 0.3 s, more on loaded cores).
          await f.until(
            () => settled(f),
            "evaluation after the restart",
            sc.backend === "sqlite" ? 10_000 : 30_000,
          );
          await f.stop();

          expectNothingLostOrRepeated(sc, point, { storePath: f.storePath }, [f]);
        });
  },
);

/**
 * What a run is told of the rules (`agents/enforcement/tell.ts`) is recorded told in the transaction that
 * makes the answer: killed inside it, nothing was told and the next answer after the restart tells it;
 * killed after it, before the answer left, it is lost and never told again. Either way at most once.
 */
describe("crash matrix, what a run is told", () => {
  it("context delivered once across a restart", async () => {
    for (const point of ["tell.beforeCommit", "tell.afterCommit"]) {
      const f = new TestFleet({ config: '[agents]\nlisten = ""' });
      fleets.push(f);
      await f.start({ HARNESS_FAILPOINTS: point });
      const hook = async (payload: Record<string, unknown>) => {
        const r = await runHook(f, "claude-code", JSON.stringify(payload));
        expect(r.code, r.stderr).toBe(0);
        return r.stdout;
      };
      const [a, b] = [claudeCode(repo, "tell-a"), claudeCode(repo, "tell-b")];
      for (const p of [a.SessionStart, b.SessionStart, a.PostToolUse, b.PostToolUse]) await hook(p);
      await f.until(() => fires(f, { rule: "same-file-collision" }).length === 1, "the collision's fire");
      // The daemon dies answering: the hook answers as for an unreachable daemon (allow).
      expect(await hook(b.PreToolUse), point).toBe("");
      expect(await f.exited()).not.toBe(0);
      await f.start();
      const answers = [await hook(b.PreToolUse), await hook(b.UserPromptSubmit), await hook(b.PreToolUse)];
      const told = answers.filter((x) => x.includes("additionalContext"));
      expect(told, point).toHaveLength(point === "tell.beforeCommit" ? 1 : 0);
      expect(toldFires(f, "impl#tell-b"), point).toHaveLength(1);
      await f.stop();
    }
  });
});

const noTmpfs = tmpfsUnavailable();

/**
 * Disk full during a hook burst (issue 26): four writers' live hook calls while the state home's tmpfs
 * fills, then a SIGKILL and a restart with room again. Every call answered admitted is stored, once;
 * every other was answered 503 `unstored` (its forwarder would spool it).
 */
describe("crash matrix, disk full during a hook burst", () => {
  it.skipIf(noTmpfs !== undefined)(
    `0 acknowledged rows lost, 0 duplicated, through a full disk and a SIGKILL${noTmpfs === undefined ? "" : ` (skipped: ${noTmpfs})`}`,
    async () => {
      const f = new TestFleet({ config: '[agents]\nlisten = ""' });
      fleets.push(f);
      const disk = mountTmpfs(path.join(f.root, "state"), 16 << 20);
      try {
        await f.start();
        const observer = await readTokenFile(f.tokens.get("observer") as string);
        const ledger = await readTokenFile(f.tokens.get("ledger") as string);
        const answers = new Map<string, { status: number; row: string | undefined }>();
        const call = async (session: string) => {
          const res = await rawPost(
            f.socketPath,
            `${HOOK_PATH_PREFIX}claude-code?harness=w${session.split("-")[1]}`,
            {
              "Content-Type": "application/json",
              Authorization: `Bearer ${observer}`,
              [LEDGER_TOKEN_HEADER]: ledger,
            },
            Buffer.from(
              JSON.stringify({
                session_id: session,
                hook_event_name: "UserPromptSubmit",
                cwd: repo,
                prompt: "p",
              }),
            ),
            5_000,
          );
          answers.set(session, { status: res.status, row: res.headers.get(ROW_HEADER) ?? undefined });
        };
        const writers = (from: number, to: number) =>
          Promise.all(
            [0, 1, 2, 3].map(async (w) => {
              for (let i = from; i < to; i++) await call(`s-${w}-${i}`);
            }),
          );
        await writers(0, 5);
        disk.fill();
        await writers(5, 15);
        await f.kill();
        disk.unfill();
        await f.start();
        await writers(15, 20);
        await f.stop();

        const sessions = journalRows(f, { kind: "run_event" }).map((r) => String(r.event.session));
        expect(new Set(sessions).size, "no row is stored twice").toBe(sessions.length);
        const stored = new Set(sessions);
        const admitted = [...answers].filter(([, a]) => a.row === "admitted").map(([s]) => s);
        for (const s of admitted) expect(stored.has(s), `${s} was answered admitted`).toBe(true);
        for (const [s, a] of answers)
          if (a.row !== "admitted") {
            expect(a, s).toEqual({ status: 503, row: "unstored" });
            expect(stored.has(s), `${s} was answered unstored`).toBe(false);
          }
        expect(
          [...answers.values()].filter((a) => a.row === "unstored").length,
          "the disk filled",
        ).toBeGreaterThan(0);
        expect(admitted.filter((s) => Number(s.split("-")[2]) >= 15)).toHaveLength(20);
      } finally {
        await f.kill();
        disk.unmount();
      }
    },
  );
});

const evaluated = (f: TestFleet) => evaluatorCursor(f) === lastRow(f).seq;

/** The force push an enforced stop rule over attempts refuses, and its input's digest. */
const FORCE_PUSH = { command: "git push --force origin main" };
const ATTEMPT_STOPS = `name = "force-push-stops"
description = "A force push is refused before it runs."
on = "attempt_event"
when = 'event.tool == "Bash" && event.digest == "${inputDigest(FORCE_PUSH)}"'
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} tried a force push"
`;

/** A live Claude Code PreToolUse (no hook time: its answer waits for the attempt's evaluation). */
async function livePreToolUse(f: TestFleet, id: string, input: Record<string, unknown>, n: number) {
  const observer = await readTokenFile(f.tokens.get("observer") as string);
  const ledger = await readTokenFile(f.tokens.get("ledger") as string);
  const body = {
    session_id: id,
    hook_event_name: "PreToolUse",
    cwd: repo,
    tool_name: "Bash",
    tool_input: input,
    tool_use_id: `toolu-${id}-${n}`,
  };
  return rawPost(
    f.socketPath,
    `${HOOK_PATH_PREFIX}claude-code?harness=impl`,
    {
      "Content-Type": "application/json",
      Authorization: `Bearer ${observer}`,
      [LEDGER_TOKEN_HEADER]: ledger,
    },
    Buffer.from(JSON.stringify(body)),
    5_000,
  );
}

/**
 * A stop decided on an attempt row: the daemon killed before it commits the stop it decided on the
 * agent's PreToolUse, then restarted. The attempt's fire is made exactly once, as a fold of the core over
 * the rows says, and reaches the session at its next call, which is refused, the run closed once.
 * (Killed after the commit, before its action starts, the stop is lost like any action: the scenarios
 * above show it.)
 */
describe("crash matrix, a stop decided on an attempt row", () => {
  it("a SIGKILL at eval.beforeCommit of the attempt's stop makes its fire once and closes the run once", async () => {
    const rules = [{ name: "force-push-stops", text: ATTEMPT_STOPS }];
    const f = new TestFleet({ enforce: ["force-push-stops"], rules, recordStops: true });
    fleets.push(f);
    // A first row of another session, evaluated and committed before the failpoint is armed, so the
    // armed daemon's first commit is the attempt's.
    await f.start();
    expect((await livePreToolUse(f, "warm", { command: "ls" }, 0)).status).toBe(200);
    await f.until(() => settled(f), "the first row's evaluation");
    await f.stop();
    await f.start({ HARNESS_FAILPOINTS: "eval.beforeCommit@1" });
    const answer = await livePreToolUse(f, "s1", FORCE_PUSH, 1).catch(() => undefined);
    await f.exited();
    expect(answer?.status, "the daemon died before it answered").toBeUndefined();
    await f.start();
    // Not `settled`: a hook-fed run's stop stays started until the run's next call.
    await f.until(() => evaluated(f), "evaluation after the restart");

    const rows = coreRows(f);
    const ruleSet = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [{ repo: "test", loads: rules.map((r) => loadRuleFile(`rules/${r.name}.toml`, r.text)) }],
      enforce: ["force-push-stops"],
      shadowPeriod: 0,
    });
    const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
    const expected = fold(ruleSet, rows, emptyState, indexedWindows(rows, shapes))
      .outcomes.flatMap((o) => o.fires)
      .filter((x) => x.rule === "force-push-stops");
    expect(expected.map((x) => [x.kind, x.action])).toEqual([["attempt_event", "stop"]]);
    expect(fires(f, { rule: "force-push-stops" }).map((x) => x.fire_id)).toEqual(expected.map((x) => x.id));

    // The session's next call is refused, and the run closed once.
    const next = await livePreToolUse(f, "s1", { command: "ls" }, 2);
    await f.until(() => evaluated(f), "the next call's evaluation");
    const [stop] = recordedActions(f).filter((a) => a.action === "stop");
    const closedRows = journalRows(f, { type: "closed", run: "impl#s1" });
    expect(next.body.toString()).toContain("force-push-stops");
    expect(stop?.state).toBe("ok");
    expect(closedRows.map((r) => [r.event.outcome, r.event.reason])).toEqual([["cancelled", "rule_stop"]]);
    // Never run through [supervisor] stop: the run is hook-fed.
    expect(f.stopped()).toEqual([]);
    await f.stop();
  });
});
