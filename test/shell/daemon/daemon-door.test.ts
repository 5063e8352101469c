/**
 * The daemon over a store whose calls take time, as PostgreSQL's round trips do (decision 0020): a stop
 * of a hook-fed run that is slow to be recorded is still recorded before a live attempt is told its row
 * is evaluated, and before `harness rules clear` releases the stops of the hold it clears.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MINUTE } from "../../../src/core/durations.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { loadGlobalConfig } from "../../../src/shell/config/global-config.js";
import { Daemon } from "../../../src/shell/daemon/daemon.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { SqliteStoreDoor } from "../../../src/shell/store/sqlite-store-door.js";
import type { StoreDoor } from "../../../src/shell/store/store-door.js";
import { createLog } from "../../../src/shell/support/log.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";
import { agentRunStops, holds, runStopReleasedBy } from "../../support/store-reads.js";
import { session } from "../agents/agents-daemon.js";

const RULE = "forbidden-command-stops";
const FORBIDDEN = "f".repeat(64);
const STOP_RULE = `name = "${RULE}"
description = "A run ran the forbidden command; stop it."
on = "run_event"
when = 'event.type == "tool" && event.digest == "${FORBIDDEN}"'
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} ran the forbidden command"
`;
/** Longer than a pass takes to commit a row's decisions here, so the stop lands well after them. */
const STOP_RECORD_MS = 150;

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A daemon with the stop rule enforced, over SQLite's door whose `ruleStop` answers late. */
async function slowStopDaemon() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-daemon-door-"));
  const store = openStore(path.join(dir, "harness.db"), "test");
  const door = new SqliteStoreDoor(store);
  const stops = door.agentRunStops;
  const slow: StoreDoor = Object.assign(Object.create(door) as SqliteStoreDoor, {
    agentRunStops: {
      ...stops,
      ruleStop: async (...args: Parameters<typeof stops.ruleStop>) => {
        await sleep(STOP_RECORD_MS);
        return stops.ruleStop(...args);
      },
    },
  });
  const loaded = loadGlobalConfig("", "harness.toml", {});
  if (!loaded.ok) throw new Error("the empty config loads");
  const config = loaded.config;
  const ruleSet = assembleRuleSet({
    starter: loadStarterPack(),
    policy: [{ repo: "test", loads: [loadRuleFile(`rules/${RULE}.toml`, STOP_RULE)] }],
    enforce: [RULE],
    disable: [],
    shadowPeriod: 0,
  });
  const daemon = await Daemon.open({
    stores: slow,
    configAtStart: config,
    rulesAtStart: { ruleSet, clones: [] },
    readConfig: async () => config,
    loadRules: async () => ({ ruleSet, clones: [] }),
    loadServed: async () => () => undefined,
    log: createLog({ level: "silent" }),
    clock: Date.now,
    metrics: new DaemonMetrics(),
    env: {},
    tickMs: MINUTE,
    onCommitted: () => undefined,
    runStops: slow.agentRunStops,
    derivers: () => [],
  });
  daemon.start();
  closing.push(async () => {
    await daemon.close();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const s = session("impl", "s1");
  /** Admits the run's rows as the hook ingest does; the last one's seq. */
  const hookRows = async (events: readonly Record<string, unknown>[]) => {
    const results = await daemon.admit(
      "observer",
      events.map((e) => ({ kind: "run_event", ...e })),
      undefined,
      { hookFed: true },
    );
    const last = results.at(-1);
    if (last?.kind !== "admitted") throw new Error(`not admitted: ${JSON.stringify(last)}`);
    return last.seq;
  };
  await hookRows([s.opened()]);
  return { daemon, store, run: s.run, forbidden: () => hookRows([s.tool({ digest: FORBIDDEN })]) };
}

describe("the daemon over a store whose writes take time", () => {
  it("tells a live attempt its row is evaluated only once the stop the row made is recorded", async () => {
    const d = await slowStopDaemon();
    const seq = await d.forbidden();
    expect(await d.daemon.evaluated(seq, 5_000)).toBe(true);
    expect(agentRunStops(d.store).map((s) => s.run)).toEqual([d.run]);
  });

  it("clears a hold only after the stops its fire made are recorded, and releases them with it", async () => {
    const d = await slowStopDaemon();
    await d.forbidden();
    // The fire's hold is committed; its stop is still on its way to the store.
    while (holds(d.store, { inForce: true }).length === 0) await sleep(5);
    expect(await d.daemon.clear("impl", RULE, "ops")).toBe(1);
    expect(agentRunStops(d.store).map((s) => s.run)).toEqual([d.run]);
    expect(runStopReleasedBy(d.store, d.run)).toBe("ops");
  });
});
