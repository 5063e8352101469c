/**
 * The reload matrix (issue 16): each config section changed under a running daemon, reloaded, and checked
 * to have taken effect, or to be named as needing a restart.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { actions, fires, holds, journalCount, journalRows } from "../../support/store-reads.js";
import { ERROR_STREAK_STOPS, HOOKS, jsonl, TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const observed = (harness: string) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#1`,
  outcome: "ok",
});

async function started(options: ConstructorParameters<typeof TestFleet>[0] = {}): Promise<TestFleet> {
  const f = new TestFleet(options);
  fleets.push(f);
  await f.start();
  return f;
}

const configFile = (f: TestFleet) => path.join(f.root, "config", "harness", "harness.toml");
const editConfig = (f: TestFleet, edit: (text: string) => string) =>
  fs.writeFileSync(configFile(f), edit(fs.readFileSync(configFile(f), "utf8")));
const writeToken = (file: string, token: string) => fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
const append = (f: TestFleet, tokenFile: string, harness: string) =>
  f.cli(["journal", "append", "--token-file", tokenFile], jsonl([observed(harness)]));

describe("harness reload applies [server]'s credentials", () => {
  it("a producer removed from [server.producers] is refused at once; one added may append", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    expect((await append(f, ledger, "before")).code).toBe(0);
    editConfig(f, (t) => t.replace(/^ledger = .*\n/m, ""));
    expect((await f.cli(["reload"])).code).toBe(0);
    const refused = await append(f, ledger, "after");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown bearer token/);
    expect(journalCount(f, { harness: "after" })).toBe(0);

    // A producer the config did not name when the daemon last loaded it: known once it is reloaded.
    editConfig(f, (t) =>
      t.replace("[server.producers]", `[server.producers]\nledger = ${JSON.stringify(ledger)}`),
    );
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await append(f, ledger, "back")).code).toBe(0);
  });

  it("a rotated control token works at once and the old one is refused", async () => {
    const f = await started();
    const control = path.join(f.root, "config", "harness", "control.token");
    const oldToken = fs.readFileSync(control, "utf8").trim();
    const rotated = path.join(f.root, "control-rotated.token");
    writeToken(rotated, `rotated-${"r".repeat(40)}`);
    editConfig(f, (t) =>
      t.replace("[server]\n", `[server]\ncontrol_token_file = ${JSON.stringify(rotated)}\n`),
    );
    // The CLI now reads the rotated token, which the daemon does not know yet: SIGHUP reloads.
    const lock = JSON.parse(fs.readFileSync(`${f.storePath}.lock`, "utf8")) as { pid: number };
    process.kill(lock.pid, "SIGHUP");
    await f.until(() => (f.daemonStdout.match(/rule set loaded/g) ?? []).length === 2, "the reload");
    expect((await f.cli(["reload"])).code).toBe(0);
    const old = await ruleClient({ socketPath: f.socketPath }, oldToken)
      .reload({})
      .catch((e: Error) => e);
    expect(old).toBeInstanceOf(Error);
    expect((old as Error).message).toMatch(/unknown bearer token/);
  });

  it("a reload whose credentials fail to load changes nothing and says why", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    const loose = path.join(f.root, "loose.token");
    fs.writeFileSync(loose, `loose-${"l".repeat(40)}\n`, { mode: 0o644 });
    fs.chmodSync(loose, 0o644);
    editConfig(f, (t) =>
      t
        .replace(/^ledger = .*\n/m, "")
        .replace(/^observer = .*$/m, `observer = ${JSON.stringify(loose)}`)
        .replace(/enforce = .*/, 'enforce = ["no-such-rule"]'),
    );
    const r = await f.cli(["reload"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/reload failed; .* unchanged: .*loose\.token: readable by group or others/s);
    // Neither the removed producer nor the rule set changed.
    expect((await append(f, ledger, "still")).code).toBe(0);
    expect(f.daemonStdout).not.toMatch(/enforce names a rule that is not loaded/);
  });

  it("a revoked read token's open WatchEvents stream ends", async () => {
    const read = `read-${"w".repeat(40)}`;
    const f = new TestFleet();
    fleets.push(f);
    const readFile = path.join(f.root, "read.token");
    writeToken(readFile, read);
    editConfig(f, (t) =>
      t.replace("[server]\n", `[server]\nread_token_file = ${JSON.stringify(readFile)}\n`),
    );
    await f.start();
    const socketReader = ruleClient({ socketPath: f.socketPath }).watchEvents({})[Symbol.asyncIterator]();
    const tokenReader = ruleClient({ socketPath: f.socketPath }, read)
      .watchEvents({})
      [Symbol.asyncIterator]();
    await socketReader.next();
    await tokenReader.next();
    writeToken(readFile, `read-${"v".repeat(40)}`);
    expect((await f.cli(["reload"])).code).toBe(0);
    const ended = await tokenReader.next().catch((e: Error) => e);
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toMatch(/revoked/);
    // The operator's socket stream, opened without a token, has no credential to lose.
    const still = await Promise.race([
      socketReader.next().then(() => "ended"),
      new Promise((r) => setTimeout(() => r("open"), 300)),
    ]);
    expect(still).toBe("open");
    await socketReader.return?.();
  });
});

const budget = (harness: string, n: number) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome: "budget_exceeded",
});

const failingRun = (harness: string) => ({
  opened: [{ kind: "run_event", type: "opened", harness, run: `${harness}#1`, trigger: "schedule" }],
  failed: [1, 2].map((n) => ({
    kind: "run_event",
    type: "tool",
    harness,
    run: `${harness}#1`,
    action: "verify",
    is_error: true,
    repo: "forge.example/org/reduit",
    digest: `d${n}`,
  })),
});

const TOOL_ERROR_NOTIFIES = `name = "tool-error-notifies"
description = "A tool call failed."
on = "run_event"
when = 'event.type == "tool" && event.is_error'
level = "notify"
cooldown = "1m"
target = "run"
message = "{{run}} made a failing tool call"
`;

const failedTool = (harness: string, n: number) => ({
  kind: "run_event",
  type: "tool",
  harness,
  run: `${harness}#${n}`,
  action: "exec",
  is_error: true,
});

describe("harness reload applies [notify] and [supervisor]", () => {
  it("a [notify] command set by a reload receives the next fire; one removed receives nothing", async () => {
    const f = new TestFleet();
    fleets.push(f);
    const hook = /^command = .*\n/m;
    const command = (fs.readFileSync(configFile(f), "utf8").match(hook) ?? [""])[0];
    editConfig(f, (t) => t.replace(hook, ""));
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    const fire = (harness: string) =>
      f.cli(["journal", "append", "--token-file", ledger], jsonl([budget(harness, 1), budget(harness, 2)]));
    await fire("before");
    await f.until(() => actions(f, { state: "undelivered" }).length === 1, "the fire without a hook");
    editConfig(f, (t) => t.replace("[notify]\n", `[notify]\n${command}`));
    expect((await f.cli(["reload"])).code).toBe(0);
    await fire("after");
    await f.until(() => f.delivered().some((d) => d.harness === "after"), "the delivery");

    editConfig(f, (t) => t.replace(hook, ""));
    expect((await f.cli(["reload"])).code).toBe(0);
    await fire("removed");
    await f.until(
      () => actions(f, { state: "undelivered" }).length === 2,
      "the fire after the hook was removed",
    );
    expect(f.delivered().some((d) => d.harness === "removed")).toBe(false);
  });

  it("[notify] events changed by a reload apply to the next fire", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    editConfig(f, (t) => t.replace("[notify]\n", '[notify]\nevents = ["rule_hold"]\n'));
    expect((await f.cli(["reload"])).code).toBe(0);
    await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([budget("quiet", 1), budget("quiet", 2)]),
    );
    await f.until(
      () =>
        actions(f, { state: "undelivered" }).filter((a) => a.detail?.includes("not in [notify] events"))
          .length === 1,
      "the fire recorded as not wanted",
    );
    expect(f.delivered()).toEqual([]);
  });

  it("a [notify] timeout changed by a reload bounds the next hook", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    editConfig(f, (t) =>
      t
        .replace(/^command = .*$/m, `command = ${JSON.stringify([path.join(HOOKS, "hang")])}`)
        .replace(/^timeout = .*$/m, 'timeout = "1s"'),
    );
    expect((await f.cli(["reload"])).code).toBe(0);
    await f.cli(["journal", "append", "--token-file", ledger], jsonl([budget("slow", 1), budget("slow", 2)]));
    await f.until(() => fires(f).length === 1, "the fire");
    // The 5s the daemon started with would still be running.
    await f.until(
      () => actions(f, { state: "timeout" }).length === 1,
      "the hook killed at the reloaded timeout",
      3_500,
    );
  });

  it("a [notify] cooldown set by a reload holds back the next notification of the same harness and rule", async () => {
    const f = new TestFleet({ rules: [{ name: "tool-error-notifies", text: TOOL_ERROR_NOTIFIES }] });
    fleets.push(f);
    await f.start();
    const observer = f.tokens.get("observer") as string;
    const toolError = (n: number) =>
      f.cli(["journal", "append", "--token-file", observer], jsonl([failedTool("chatty", n)]));
    const deliveries = () => f.delivered().filter((d) => d.harness === "chatty").length;
    await toolError(1);
    await toolError(2);
    // The daemon started with cooldown = "0s": every fire reaches the hook.
    await f.until(() => deliveries() === 2, "both notifications");
    editConfig(f, (t) => t.replace(/^cooldown = .*$/m, 'cooldown = "1h"'));
    expect((await f.cli(["reload"])).code).toBe(0);
    await toolError(3);
    await f.until(() => deliveries() === 3, "the first notification under the new cooldown");
    await toolError(4);
    await f.until(
      () => actions(f).filter((a) => a.detail?.includes("inside the 1h cooldown")).length === 1,
      "the next one held back",
    );
    expect(deliveries()).toBe(3);
  });

  it("a shadow_period changed by a reload puts a rule back in shadow", async () => {
    const f = new TestFleet({ rules: [{ name: "tool-error-notifies", text: TOOL_ERROR_NOTIFIES }] });
    fleets.push(f);
    // Under "0s" the first row a rule sees completes its shadow for good (REQ-9), and the daemon ticks
    // on the wall-clock minute: start early in a minute, so no tick lands before the reload.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    await f.start();
    const mode = async () =>
      JSON.parse((await f.cli(["rules", "show", "tool-error-notifies", "--json"])).stdout).mode;
    expect(await mode()).toBe("active");
    editConfig(f, (t) => t.replace(/^shadow_period = .*$/m, 'shadow_period = "30d"'));
    expect((await f.cli(["reload"])).code).toBe(0);
    expect(await mode()).toMatch(/^shadow/);
    const observer = f.tokens.get("observer") as string;
    await f.cli(["journal", "append", "--token-file", observer], jsonl([failedTool("quiet", 1)]));
    await f.until(() => fires(f, { mode: "shadow" }).length === 1, "a shadow fire");
    expect(f.delivered()).toEqual([]);
  });

  it("a [supervisor] stop command set by a reload runs for the next stop", async () => {
    const f = new TestFleet({
      enforce: ["error-streak-stops"],
      rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    });
    fleets.push(f);
    await f.start();
    const ledger = f.tokens.get("ledger") as string;
    const observer = f.tokens.get("observer") as string;
    const stopRun = async (harness: string) => {
      const run = failingRun(harness);
      await f.cli(["journal", "append", "--token-file", ledger], jsonl(run.opened));
      await f.cli(["journal", "append", "--token-file", observer], jsonl(run.failed));
    };
    await stopRun("before");
    await f.until(
      () => actions(f, { action: "stop", state: "undelivered" }).length === 1,
      "the stop without a command",
    );
    editConfig(
      f,
      (t) => `${t}\n[supervisor]\nstop = ${JSON.stringify([path.join(HOOKS, "record-args"), f.stops])}\n`,
    );
    const status = () => ruleClient({ socketPath: f.socketPath }).getStatus({});
    expect((await status()).supervisorStopConfigured).toBe(false);
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await status()).supervisorStopConfigured).toBe(true);
    await stopRun("after");
    await f.until(() => f.stopped().length === 1, "the stop command's run");
    expect(f.stopped()[0]).toContain("after");
  });
});

describe("harness reload names what needs a restart", () => {
  it("a changed listening address, metrics token or retention is named by reload, its log line and doctor", async () => {
    const f = await started();
    const socket = f.socketPath;
    const metricsToken = path.join(f.root, "metrics.token");
    writeToken(metricsToken, `metrics-${"m".repeat(40)}`);
    editConfig(f, (t) =>
      t
        .replace("[memory.rules]\n", '[memory.rules]\njournal_retention = "60d"\n')
        .replace(
          'metrics_listen = "127.0.0.1:0"',
          `metrics_listen = "127.0.0.1:1"\nlisten = "127.0.0.1:0"\nsocket = ${JSON.stringify(path.join(f.root, "other.sock"))}\nmetrics_token_file = ${JSON.stringify(metricsToken)}`,
        ),
    );
    const keys = [
      "memory.rules.journal_retention",
      "server.listen",
      "server.metrics_listen",
      "server.metrics_token_file",
      "server.socket",
    ];
    const r = await f.cli(["reload", "--json", "--socket", socket]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout).needs_restart).toEqual(keys);
    const text = await f.cli(["reload", "--socket", socket]);
    expect(text.stdout).toMatch(
      /needs a restart: memory\.rules\.journal_retention, server\.listen, .*server\.socket/,
    );
    expect(f.daemonStdout).toMatch(/"needs_restart":\["memory\.rules\.journal_retention".*reloaded/);
    const doctor = await f.cli(["doctor", "--socket", socket]);
    expect(doctor.stdout).toMatch(
      /changed since the daemon started and need a restart: memory\.rules\.journal_retention/,
    );
  });

  it("a reload that changes nothing a restart needs names nothing", async () => {
    const f = await started();
    const r = await f.cli(["reload", "--json"]);
    expect(JSON.parse(r.stdout).needs_restart).toEqual([]);
  });
});

describe("a daemon without producer credentials", () => {
  it("prints at start the exact command that makes one, whose token appends at once", async () => {
    const f = new TestFleet({ noConfig: true });
    fleets.push(f);
    const stderr = await f.start();
    const command = /make one: harness (token create [^(]*) \(in force/.exec(stderr)?.[1];
    expect(command).toBeDefined();
    const made = await f.cli((command as string).trim().split(" "));
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const configDir = path.join(f.root, "config", "harness");
    const appended = await append(f, path.join(configDir, "ledger.token"), "first");
    expect(appended.code).toBe(0);
    expect(journalRows(f, { harness: "first" }).map((r) => r.source)).toEqual(["ledger"]);
  });
});

describe("finding 11: reload refuses what it cannot read", () => {
  const budgetExceeded = (n: number) => ({
    kind: "run_event",
    type: "closed",
    harness: "impl",
    run: `impl#budget-${n}`,
    outcome: "budget_exceeded",
  });
  const holdsOn = (f: TestFleet) => holds(f, { harness: "impl", inForce: true }).length;
  const doctor = async (f: TestFleet) => {
    const r = await f.cli(["doctor", "--json"]);
    const checks = (
      JSON.parse(r.stdout) as {
        checks: { name: string; status: string; detail: string; findings: { message: string }[] }[];
      }
    ).checks;
    return { code: r.code, reload: checks.find((c) => c.name === "reload") };
  };

  it("finding 11: with the config file gone, harness reload fails, the config in force stays (producers accepted, no hold released) and doctor fails until a good reload", async () => {
    const f = await started({ enforce: ["budget-exhaustion-recurring"] });
    const ledger = f.tokens.get("ledger") as string;
    const appended = await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([budgetExceeded(1), budgetExceeded(2)]),
    );
    expect(appended.code, appended.stderr).toBe(0);
    await f.until(() => holdsOn(f) === 1, "the hold on impl");

    const moved = `${configFile(f)}.moved`;
    fs.renameSync(configFile(f), moved);
    const r = await f.cli(["reload"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`config ${configFile(f)} does not exist`);
    expect(r.stderr).toContain("harness reload --defaults");
    // The config in force stays: its producer still appends, and the hold is still on.
    expect((await append(f, ledger, "still")).code).toBe(0);
    expect(holdsOn(f)).toBe(1);
    const failed = await doctor(f);
    expect(failed.code).toBe(1);
    expect(failed.reload?.status).toBe("fail");
    expect(failed.reload?.findings.map((x) => x.message).join("\n")).toContain("does not exist");

    fs.renameSync(moved, configFile(f));
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await doctor(f)).reload?.status).toBe("pass");
    expect(holdsOn(f)).toBe(1);

    // Asked for, defaults are what the operator gets.
    fs.renameSync(configFile(f), moved);
    const defaults = await f.cli(["reload", "--defaults"]);
    expect(defaults.code, defaults.stderr).toBe(0);
    expect((await doctor(f)).reload?.status).toBe("pass");
  });

  it("finding 11: a SIGHUP reload that fails makes doctor fail, naming the error, until a good reload", async () => {
    const f = await started();
    const lock = JSON.parse(fs.readFileSync(`${f.storePath}.lock`, "utf8")) as { pid: number };
    const good = fs.readFileSync(configFile(f), "utf8");
    fs.writeFileSync(configFile(f), `${good}\n[notify\n`);
    process.kill(lock.pid, "SIGHUP");
    await f.until(() => f.daemonStdout.includes("reload failed"), "the failed reload's log line");
    const failed = await doctor(f);
    expect(failed.code).toBe(1);
    expect(failed.reload?.status).toBe("fail");
    expect(failed.reload?.findings.map((x) => x.message).join("\n")).toContain(configFile(f));
    expect((await append(f, f.tokens.get("ledger") as string, "still")).code).toBe(0);

    fs.writeFileSync(configFile(f), good);
    process.kill(lock.pid, "SIGHUP");
    await f.until(() => (f.daemonStdout.match(/rule set loaded/g) ?? []).length === 2, "the good reload");
    expect((await doctor(f)).reload?.status).toBe("pass");
  });
});
