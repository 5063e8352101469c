import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { actions } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

/**
 * Long enough for a daemon restart to land inside it on a busy machine (8 s was not, with three test
 * files sharing 2 cores), short enough to wait out: the wait is idle.
 */
const COOLDOWN_MS = 20_000;

const RUN_FAILED = `name = "run-failed"
description = "Notifies on every failed run."
on = "run_event"
when = 'event.type == "closed" && event.outcome == "failed"'
level = "notify"
target = "run"
message = "{{run}} failed"
`;

let fleet: TestFleet | undefined;
afterEach(async () => {
  await fleet?.dispose();
  fleet = undefined;
});

it("A restart inside a notify cooldown sends nothing twice", async () => {
  // Each run is its own rule-cooldown target, so every failed run fires; only notify's cooldown,
  // keyed by (harness, event, rule), stands between the fires and the hook.
  const f = new TestFleet({ rules: [{ name: "run-failed", text: RUN_FAILED }] });
  fleet = f;
  const configFile = path.join(f.root, "config", "harness", "harness.toml");
  const config = fs.readFileSync(configFile, "utf8");
  fs.writeFileSync(configFile, config.replace('cooldown = "0s"', `cooldown = "${COOLDOWN_MS / 1000}s"`));
  const ledger = f.tokens.get("ledger") as string;
  const deliveries = () => f.delivered().filter((d) => d.rule === "run-failed");
  /** Appends run `n`'s failure and resolves with its notify action's final state. */
  const fail = async (n: number): Promise<string> => {
    const run = `impl#${n}`;
    const closed = { kind: "run_event", type: "closed", harness: "impl", run, outcome: "failed" };
    expect((await f.cli(["journal", "append", "--token-file", ledger], jsonl([closed]))).code).toBe(0);
    const state = () => actions(f, { action: "notify", rule: "run-failed", run })[0]?.state;
    await f.until(() => !["pending", "started", undefined].includes(state()), `${run}'s notify outcome`);
    return state() as string;
  };

  await f.start();
  const beforeFirst = Date.now();
  expect(await fail(1)).toBe("ok");
  const afterFirst = Date.now();
  await f.until(() => deliveries().length === 1, "the first delivery");

  await f.stop();
  await f.start();
  expect(await fail(2)).toBe("suppressed");
  // The second offer came before this; the first was stamped after `beforeFirst`.
  expect(Date.now() - beforeFirst, "the restart took longer than the cooldown").toBeLessThan(COOLDOWN_MS);
  expect(deliveries()).toHaveLength(1);

  await new Promise((r) => setTimeout(r, afterFirst + COOLDOWN_MS - Date.now()));
  expect(await fail(3)).toBe("ok");
  await f.until(() => deliveries().length === 2, "the delivery after the cooldown");
  // The delivery files are listed in directory order, not delivery order; the waits above show the order.
  expect(
    deliveries()
      .map((d) => d.message)
      .sort(),
  ).toEqual(["impl#1 failed", "impl#3 failed"]);
}, 60_000);
