import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REDACTED } from "../../../src/core/redact.js";
import {
  buildPayload,
  type CooldownStore,
  DEFAULT_NOTIFY_CONFIG,
  Notifier,
  type NotifyConfig,
  NotifyConfigError,
  type NotifyEvent,
} from "../../../src/shell/notify/index.js";
import { promised } from "../../../src/shell/store/async-port.js";
import { NotifyCooldowns } from "../../../src/shell/store/notify-cooldowns.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { notifyCooldowns } from "../../support/store-reads.js";
import { alive, hook, memoryCooldowns, recorder, ruleFired, tempDir, until } from "./helpers.js";

const MIN = 60_000;
const TIMEOUT = 300;

let tmp: ReturnType<typeof tempDir>;
let open: Notifier[];
let stores: OpenedStore[];
beforeEach(() => {
  tmp = tempDir();
  open = [];
  stores = [];
});
afterEach(async () => {
  await Promise.all(open.map((n) => n.close()));
  for (const s of stores) s.close();
  tmp.remove();
});

/** A notifier over a fixture hook, on a clock the test moves. */
function setup(
  command: readonly string[] | undefined,
  config: Partial<NotifyConfig> = {},
  cooldowns: CooldownStore = memoryCooldowns(),
) {
  const rec = recorder();
  const clock = { now: 0 };
  const cooldownErrors: string[] = [];
  const notifier = new Notifier(
    { ...DEFAULT_NOTIFY_CONFIG, timeoutMs: TIMEOUT, command, ...config },
    {
      onOutcome: rec.onOutcome,
      cooldowns,
      onCooldownError: (e) => cooldownErrors.push(e.message),
      now: () => clock.now,
      host: "kitt",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", KEEP_ME: "yes", HARNESS_NOTIFY_STALE: "leak" },
    },
  );
  open.push(notifier);
  return { notifier, clock, cooldownErrors, ...rec };
}

/** A daemon's store at `file`, closed after the test if the test has not closed it. */
function storeAt(file: string): OpenedStore {
  const store = openStore(file, "test");
  stores.push(store);
  return store;
}

/** The deliveries the record hook saw: stdin JSON and environment lines. */
function recorded(dir: string): { json: unknown; env: string[] }[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({
      json: JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")),
      env: fs.readFileSync(path.join(dir, f.replace(/\.json$/, ".env")), "utf8").split("\n"),
    }));
}

describe("Notifier", () => {
  it("delivers the redacted payload on stdin and in HARNESS_NOTIFY_*, stripping inherited ones", async () => {
    const { notifier, outcomes } = setup([hook("record"), tmp.dir]);
    const e = ruleFired({ message: "push failed: Authorization: Bearer abcdefghijklmnop1234" });
    notifier.offer(e);
    await notifier.drain();
    expect(outcomes.map((o) => [o.event, o.result])).toEqual([["rule_fired", "ok"]]);
    expect(outcomes[0]?.detail.notification).toBe(e);
    const [delivery, ...more] = recorded(tmp.dir);
    expect(more).toEqual([]);
    expect(delivery?.json).toEqual(buildPayload(e, "kitt"));
    expect(delivery?.json).toMatchObject({ message: `push failed: Authorization: Bearer ${REDACTED}` });
    const env = delivery?.env ?? [];
    expect(env).toEqual(
      expect.arrayContaining([
        "KEEP_ME=yes",
        "HARNESS_NOTIFY_EVENT=rule_fired",
        "HARNESS_NOTIFY_HARNESS=reduit-agent",
        "HARNESS_NOTIFY_HOST=kitt",
        "HARNESS_NOTIFY_STATE=running",
        `HARNESS_NOTIFY_MESSAGE=push failed: Authorization: Bearer ${REDACTED}`,
      ]),
    );
    expect(env.filter((l) => l.startsWith("HARNESS_NOTIFY_"))).toHaveLength(5);
  });

  it("kills a hanging hook and its grandchild at the timeout and reports timeout", async () => {
    const pidFile = path.join(tmp.dir, "pid");
    const { notifier, outcomes } = setup([hook("hang-with-child"), pidFile]);
    notifier.offer(ruleFired());
    await notifier.drain();
    expect(outcomes.map((o) => o.result)).toEqual(["timeout"]);
    expect(outcomes[0]?.detail.durationMs).toBeGreaterThanOrEqual(TIMEOUT - 5);
    const grandchild = Number(fs.readFileSync(pidFile, "utf8"));
    expect(await until(() => !alive(grandchild))).toBe(true);
  });

  it("reports a non-zero exit as error and never retries it", async () => {
    const count = path.join(tmp.dir, "count");
    const { notifier, outcomes } = setup([hook("fail"), count], { cooldownMs: 0 });
    notifier.offer(ruleFired());
    await notifier.drain();
    await new Promise((r) => setTimeout(r, 200));
    await notifier.drain();
    expect(outcomes.map((o) => [o.result, o.detail.reason])).toEqual([["error", "exit status 3"]]);
    expect(outcomes[0]?.detail.output).toBe(`upload rejected for token=${REDACTED}\n`);
    expect(fs.readFileSync(count, "utf8")).toBe("run\n");
  });

  it("reports a hook that does not exist as error, and offer does not throw", async () => {
    const { notifier, outcomes } = setup([path.join(tmp.dir, "missing-hook")]);
    expect(() => notifier.offer(ruleFired())).not.toThrow();
    await notifier.drain();
    expect(outcomes.map((o) => [o.result, o.detail.reason])).toEqual([["error", "spawn ENOENT"]]);
  });

  it("survives a hook flooding stdout, keeping a bounded output tail", async () => {
    const { notifier, outcomes } = setup([hook("flood")]);
    notifier.offer(ruleFired());
    await notifier.drain();
    expect(outcomes.map((o) => o.result)).toEqual(["timeout"]);
    expect(outcomes[0]?.detail.output.length).toBeLessThanOrEqual(4096);
  });

  it("drops what the queue cannot hold without blocking, and reports each offer once", async () => {
    const { notifier, outcomes } = setup([hook("hang")], {
      workers: 1,
      queueSize: 2,
      cooldownMs: 0,
      timeoutMs: 10_000,
    });
    const offers = 1_000;
    const started = performance.now();
    for (let i = 0; i < offers; i++) notifier.offer(ruleFired({ fireId: `f-${i}` }));
    expect(performance.now() - started).toBeLessThan(250);
    expect(outcomes).toHaveLength(offers - 2);
    expect(outcomes.every((o) => o.result === "dropped")).toBe(true);
    expect(outcomes[0]?.detail).toMatchObject({ reason: "the queue is full (2)", durationMs: 0 });
    await new Promise((r) => setTimeout(r, 50));
    await notifier.close();
    const fates = outcomes.slice(offers - 2).map((o) => [o.detail.notification.fireId, o.result]);
    // f-0 was running and is killed; f-1 was still queued when the worker took f-0.
    expect(fates).toEqual([
      ["f-1", "dropped"],
      ["f-0", "error"],
    ]);
    notifier.offer(ruleFired());
    expect(outcomes.at(-1)).toMatchObject({
      result: "dropped",
      detail: { reason: "the notifier is closed" },
    });
  });

  it("a dropped event does not start the cooldown", async () => {
    const { notifier, outcomes } = setup([hook("record"), tmp.dir], { workers: 1, queueSize: 1 });
    notifier.offer(ruleFired({ rule: "a" }));
    notifier.offer(ruleFired({ rule: "b" }));
    notifier.offer(ruleFired({ rule: "b" }));
    await notifier.drain();
    notifier.offer(ruleFired({ rule: "b" }));
    await notifier.drain();
    expect(outcomes.map((o) => [o.detail.notification.rule, o.result])).toEqual([
      ["b", "dropped"],
      ["b", "dropped"],
      ["a", "ok"],
      ["b", "ok"],
    ]);
  });

  it("keys the cooldown by harness, event and rule", async () => {
    const { notifier, clock, outcomes } = setup([hook("record"), tmp.dir]);
    const hold = (rule: string): NotifyEvent => ({ ...ruleFired({ rule }), event: "rule_hold" });
    const offer = async (e: NotifyEvent, at: number) => {
      clock.now = at;
      notifier.offer(e);
      await notifier.drain();
    };
    await offer(ruleFired({ rule: "a" }), 0);
    await offer(ruleFired({ rule: "a" }), 1 * MIN);
    await offer(ruleFired({ rule: "b" }), 2 * MIN);
    await offer(ruleFired({ rule: "a", harness: "other" }), 3 * MIN);
    await offer(hold("a"), 4 * MIN);
    await offer(ruleFired({ rule: "a" }), 15 * MIN - 1);
    await offer(ruleFired({ rule: "a" }), 15 * MIN);
    expect(
      outcomes.map((o) => [o.detail.notification.harness, o.event, o.detail.notification.rule, o.result]),
    ).toEqual([
      ["reduit-agent", "rule_fired", "a", "ok"],
      ["reduit-agent", "rule_fired", "a", "suppressed"],
      ["reduit-agent", "rule_fired", "b", "ok"],
      ["other", "rule_fired", "a", "ok"],
      ["reduit-agent", "rule_hold", "a", "ok"],
      ["reduit-agent", "rule_fired", "a", "suppressed"],
      ["reduit-agent", "rule_fired", "a", "ok"],
    ]);
    expect(outcomes[1]?.detail.reason).toBe("inside the 15m cooldown");
    expect(recorded(tmp.dir)).toHaveLength(5);
  });

  it("keeps its cooldowns in the store it is given, so a restart on the same store stays silent", async () => {
    const file = path.join(tmp.dir, "state", "harness.db");
    const offerAfterRestart = async (at: number) => {
      const store = storeAt(file);
      const { notifier, clock, outcomes } = setup(
        [hook("record"), tmp.dir],
        {},
        promised(new NotifyCooldowns(store.db)),
      );
      clock.now = at;
      notifier.offer(ruleFired());
      await notifier.drain();
      await notifier.close();
      store.close();
      return outcomes.map((o) => o.result);
    };
    expect(await offerAfterRestart(0)).toEqual(["ok"]);
    expect(await offerAfterRestart(15 * MIN - 1)).toEqual(["suppressed"]);
    expect(await offerAfterRestart(15 * MIN)).toEqual(["ok"]);
    expect(recorded(tmp.dir)).toHaveLength(2);
  });

  it("forgets cooldowns that have run out, once a cooldown period, so the store stays bounded", async () => {
    const store = storeAt(path.join(tmp.dir, "state", "harness.db"));
    const { notifier, clock } = setup([hook("record"), tmp.dir], {}, promised(new NotifyCooldowns(store.db)));
    /** Offers `rule` at `at`, then lists the rows left as `rule@sent_at`. */
    const kept = async (rule: string, at: number) => {
      clock.now = at;
      notifier.offer(ruleFired({ rule }));
      await notifier.drain();
      return notifyCooldowns(store);
    };
    expect(await kept("a", 0)).toEqual(["a@0"]);
    expect(await kept("b", 10 * MIN)).toEqual(["a@0", `b@${10 * MIN}`]);
    expect(await kept("c", 15 * MIN)).toEqual([`b@${10 * MIN}`, `c@${15 * MIN}`]);
    // The last sweep was at 15m: b's cooldown is over at 25m, but it waits for the sweep at 30m.
    expect(await kept("d", 29 * MIN)).toEqual([`b@${10 * MIN}`, `c@${15 * MIN}`, `d@${29 * MIN}`]);
    expect(await kept("e", 30 * MIN)).toEqual([`d@${29 * MIN}`, `e@${30 * MIN}`]);
  });

  it("delivers once two offers of one key made together, however long the store takes to answer", async () => {
    const memory = memoryCooldowns();
    const later = <T>(answer: Promise<T>) =>
      answer.then((v) => new Promise<T>((resolve) => setTimeout(() => resolve(v), 20)));
    // Each call answers after a round trip's wait: the second check would otherwise run before the
    // first offer's stamp lands, and both would go out.
    const slow: CooldownStore = {
      lastSent: (key) => later(memory.lastSent(key)),
      recordSent: (key, at) => later(memory.recordSent(key, at)),
      forgetSentBy: (at) => later(memory.forgetSentBy(at)),
    };
    const { notifier, outcomes } = setup([hook("record"), tmp.dir], {}, slow);
    notifier.offer(ruleFired({ fireId: "f-1" }));
    notifier.offer(ruleFired({ fireId: "f-2" }));
    notifier.offer(ruleFired({ fireId: "f-3", rule: "other" }));
    await notifier.drain();
    expect(outcomes.map((o) => `${o.detail.notification.fireId} ${o.result}`).sort()).toEqual([
      "f-1 ok",
      "f-2 suppressed",
      "f-3 ok",
    ]);
    expect(recorded(tmp.dir)).toHaveLength(2);
  });

  it("delivers when its cooldown store fails, reporting each failure", async () => {
    const failing = (call: string) => () => {
      throw new Error(`${call} failed`);
    };
    const broken: CooldownStore = {
      lastSent: failing("lastSent"),
      recordSent: failing("recordSent"),
      forgetSentBy: failing("forgetSentBy"),
    };
    const { notifier, outcomes, cooldownErrors } = setup([hook("record"), tmp.dir], {}, broken);
    notifier.offer(ruleFired());
    await notifier.drain();
    expect(outcomes.map((o) => o.result)).toEqual(["ok"]);
    expect(cooldownErrors).toEqual(["lastSent failed", "forgetSentBy failed", "recordSent failed"]);
  });

  it("runs nothing and reports nothing for an event not in events, or without a command", async () => {
    const filtered = setup([hook("record"), tmp.dir], { events: ["rule_hold"] });
    filtered.notifier.offer(ruleFired());
    const unconfigured = setup(undefined);
    unconfigured.notifier.offer(ruleFired());
    await Promise.all([filtered.notifier.drain(), unconfigured.notifier.drain()]);
    expect(filtered.outcomes).toEqual([]);
    expect(unconfigured.outcomes).toEqual([]);
    expect(recorded(tmp.dir)).toEqual([]);
  });

  it("runs up to `workers` hooks at once", async () => {
    const { notifier, outcomes } = setup([hook("mark-and-hang"), tmp.dir], {
      workers: 3,
      cooldownMs: 0,
      timeoutMs: 10_000,
    });
    for (let i = 0; i < 5; i++) notifier.offer(ruleFired({ fireId: `f-${i}` }));
    const started = () => fs.readdirSync(tmp.dir).length;
    expect(await until(() => started() >= 3)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(started()).toBe(3);
    await notifier.close();
    const fates = outcomes.map((o) => `${o.detail.notification.fireId} ${o.result}`);
    // The queued two are dropped first, then the three killed ones report in whatever order they die.
    expect(fates.slice(0, 2)).toEqual(["f-3 dropped", "f-4 dropped"]);
    expect(fates.slice(2).sort()).toEqual(["f-0 error", "f-1 error", "f-2 error"]);
  });

  it("refuses a relative argv[0] naming [notify] command", () => {
    const make = (command: string[]) =>
      new Notifier(
        { ...DEFAULT_NOTIFY_CONFIG, command },
        { onOutcome: () => {}, cooldowns: memoryCooldowns(), onCooldownError: () => {} },
      );
    expect(() => make(["notify.sh"])).toThrow(NotifyConfigError);
    expect(() => make(["bin/notify"])).toThrow(/^\[notify\] command: argv\[0\] must be an absolute path/);
    expect(() => make([])).toThrow(NotifyConfigError);
  });
});
