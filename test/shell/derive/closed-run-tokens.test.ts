/**
 * A run's gateway tokens are revoked when its `closed` row commits, whoever wrote it: here the rows the
 * daemon derives itself (a stop delivered at a hook-fed run's next hook call, the stale run closer),
 * which never pass through Append's admission.
 */
import { afterEach, expect, it } from "vitest";
import { HOUR, MINUTE } from "../../../src/core/durations.js";
import { actions, revokedTokenRuns } from "../../support/store-reads.js";
import { AgentsDaemon, session } from "../agents/agents-daemon.js";

const daemons: AgentsDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.dispose();
});

const STOPS = {
  name: "forbidden-command-stops",
  text: `name = "forbidden-command-stops"
description = "A run ran the forbidden command; stop it."
on = "run_event"
when = 'event.type == "tool" && event.digest == "${"f".repeat(64)}"'
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} ran the forbidden command"
`,
};

const gatewayToken = async (d: AgentsDaemon, harness: string, run: string) => {
  const made = await d.fleet.cli(["token", "create", "--gateway", "--harness", harness, "--run", run]);
  expect(made.code, made.stderr).toBe(0);
};
const revoked = (d: AgentsDaemon) => revokedTokenRuns(d).map((run) => ({ run }));

it("a stop delivered at the run's next hook call revokes the run's gateway tokens", async () => {
  const d = await AgentsDaemon.start({ rules: [STOPS], enforce: ["forbidden-command-stops"] });
  daemons.push(d);
  const a = session("impl", "a");
  const b = session("impl", "b");
  await gatewayToken(d, "impl", a.run);
  await gatewayToken(d, "impl", b.run);
  await d.hookRows("ledger", [a.opened(), b.opened()]);
  await d.hookRows("observer", [a.tool({ digest: "f".repeat(64) })]);
  await d.until(() => actions(d, { action: "stop", state: "started" }).length === 1, "the stop waiting");
  expect(revoked(d)).toEqual([]);
  expect((await d.check("impl", a.run)).kind).toBe("stopped");
  await d.settled();
  expect(revoked(d)).toEqual([{ run: a.run }]);
});

it("the stale run closer's closed row revokes the run's gateway tokens", async () => {
  let offset = 0;
  const d = await AgentsDaemon.start({ clock: () => Date.now() + offset, tickMs: 100 });
  daemons.push(d);
  const quiet = session("impl", "quiet");
  await gatewayToken(d, "impl", quiet.run);
  await d.hookRows("ledger", [quiet.opened()]);
  offset += 12 * HOUR + MINUTE;
  await d.until(() => d.rows("closed").length === 1, "the stale run closed");
  await d.settled();
  expect(revoked(d)).toEqual([{ run: quiet.run }]);
});
