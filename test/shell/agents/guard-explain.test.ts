/**
 * `rules explain journal:<seq>` of the daemon's own guards' decisions, beside the loop stop's end-to-end
 * scenario (`flow-e2e.test.ts`): the stale run closer's close of a hook-fed run, against a real daemon
 * whose clock the test moves; a supervised run's loop stop, which its supervisor acted on; and a journal
 * id of any other row, which no guard decided, is an unknown fire.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, expect, it } from "vitest";
import { HOUR, MINUTE } from "../../../src/core/durations.js";
import { explanationJson, explanationLines } from "../../../src/shell/cli/render/fires.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { AgentsDaemon, session } from "./agents-daemon.js";

const daemons: AgentsDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.dispose();
});

it("a stale close is explained: the run, its last row and how long it was quiet", async () => {
  let offset = 0;
  const clock = () => Date.now() + offset;
  const d = await AgentsDaemon.start({
    clock,
    tickMs: 100,
    config: '[agents]\nlisten = ""\nstale_after = "12h"',
  });
  daemons.push(d);
  const quiet = session("impl", "quiet");
  const [opened] = await d.hookRows("ledger", [quiet.opened()]);
  offset += 12 * HOUR + MINUTE;
  await d.until(() => d.rows("closed").length > 0, "the stale run closed");
  const closed = d.rows("closed")[0];
  const client = ruleClient({ socketPath: d.fleet.socketPath });
  const x = await client.explainFire({ fireId: `journal:${closed?.seq}` });
  expect(x.fire).toBeUndefined();
  expect(x.row).toMatchObject({ seq: BigInt(closed?.seq ?? 0), type: "closed", source: "ledger" });
  expect(x.guard).toMatchObject({
    kind: "stale_closed",
    harness: "impl",
    run: quiet.run,
    lastSeq: BigInt(opened ?? 0),
  });
  const lines = explanationLines(x);
  expect(lines[0]).toBe(`stale close of run ${quiet.run} (harness impl): the stale run closer, not a rule`);
  expect(lines.at(-1)).toMatch(
    new RegExp(
      `^  ${quiet.run} was closed interrupted by the stale run closer after 12h\\d*m?.* with no row from its agent`,
    ),
  );
  expect(explanationJson(x)).toMatchObject({ guard: "stale_closed", run: quiet.run, last_seq: opened });

  // The opened row is the agent's, no guard's decision.
  const refused = await client.explainFire({ fireId: `journal:${opened}` }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ConnectError);
  expect((refused as ConnectError).code).toBe(Code.NotFound);
  for (const id of ["journal:0", "journal:01", "journal:x", `journal:${"9".repeat(17)}`]) {
    const e = await client.explainFire({ fireId: id }).catch((e: unknown) => e);
    expect((e as ConnectError).code, id).toBe(Code.NotFound);
  }
});

it("a supervised run's loop stop is explained as its supervisor's: no hook call to tell, no resume", async () => {
  const d = await AgentsDaemon.start();
  daemons.push(d);
  const run = { harness: "nightly", run: "nightly#1" };
  const digest = "b".repeat(64);
  await d.append("ledger", [{ type: "opened", ...run }]);
  const tools = await d.append(
    "observer",
    Array.from({ length: 8 }, () => ({ type: "tool", ...run, tool: "Bash", digest })),
  );
  const [stopped] = await d.append("loopguard", [{ type: "loop_stopped", ...run, tool: "Bash", digest }]);
  const x = await ruleClient({ socketPath: d.fleet.socketPath }).explainFire({
    fireId: `journal:${stopped}`,
  });
  expect(x.guard).toMatchObject({
    kind: "loop_stopped",
    run: "nightly#1",
    streakRows: 8,
    firstSeq: BigInt(tools[0] ?? 0),
    lastSeq: BigInt(tools[7] ?? 0),
    resumeCommand: "",
  });
  const lines = explanationLines(x);
  expect(lines.some((l) => l.startsWith("  told"))).toBe(false);
  expect(lines.at(-1)).toBe(
    "  nightly#1 was stopped by its supervisor's loop guard (the same tool call over and over), which stopped harness nightly",
  );
  expect(explanationJson(x)).toMatchObject({ resume: null, streak: { calls: 8 } });
});
