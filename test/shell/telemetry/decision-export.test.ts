/**
 * Issue 33 item 1: decisions exported over OpenTelemetry, received by a real OTLP/HTTP receiver
 * (./otlp-receiver.ts) from a real daemon process.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Fire } from "../../../src/core/outcome.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";
import {
  decisionRecord,
  MAX_BODY_CHARS,
  startDecisionExport,
} from "../../../src/shell/telemetry/decision-export.js";
import { parseOtlpHeaders } from "../../../src/shell/telemetry/otlp-headers.js";
import { fires, journalRows } from "../../support/store-reads.js";
import { AgentsDaemon, session } from "../agents/agents-daemon.js";
import { claudeCode } from "../agents/payloads.js";
import { freePort, jsonl, TestFleet } from "../daemon-harness.js";
import { OtlpReceiver } from "./otlp-receiver.js";

const rule = (name: string, level: string) => ({
  name,
  text: `name = "${name}"
description = "every tool call"
on = "run_event"
when = 'event.type == "tool"'
level = "${level}"
target = "run"
message = "tool call in {{run}}"
`,
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fleetExportingTo(endpoint: string, protocol: string): Promise<TestFleet> {
  const fleet = new TestFleet({
    rules: [rule("tool-notify", "notify"), rule("tool-annotate", "annotate")],
    config: `[otel]\nendpoint = "${endpoint}"\nprotocol = "${protocol}"\n`,
  });
  cleanups.push(() => fleet.dispose());
  await fleet.start();
  return fleet;
}

async function append(fleet: TestFleet, runs: number): Promise<void> {
  const lines = Array.from({ length: runs }, (_, i) =>
    jsonl([{ kind: "run_event", type: "tool", harness: "impl", run: `impl#${i + 1}`, action: "edit" }]),
  ).join("\n");
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
    lines,
  );
  expect(r.code, r.stderr).toBe(0);
}

async function metricsText(fleet: TestFleet): Promise<string> {
  const url = /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(fleet.daemonStderr)?.[1];
  if (url === undefined) throw new Error(`no metrics address in ${fleet.daemonStderr}`);
  return (await fetch(url)).text();
}

describe("decisions over OpenTelemetry", () => {
  it("rules firing produce the records with the right attributes", async () => {
    const receiver = new OtlpReceiver();
    cleanups.push(() => receiver.stop());
    const fleet = await fleetExportingTo(await receiver.start(), "http/json");
    await append(fleet, 2);
    const fireRecords = () => receiver.records.filter((r) => r.attributes["harness.decision"] === "fire");
    await fleet.until(() => fireRecords().length === 4, "four fire records");
    const seqs = new Map(journalRows(fleet, { kind: "run_event" }).map((r) => [r.event.run, r.seq]));
    for (const run of ["impl#1", "impl#2"]) {
      const active = fireRecords().find(
        (r) =>
          r.attributes["harness.target.run"] === run && r.attributes["harness.rule.name"] === "tool-notify",
      );
      expect(active?.attributes).toMatchObject({
        "harness.rule.level": "notify",
        "harness.rule.mode": "active",
        "harness.target.harness": "impl",
        "harness.journal.seq": seqs.get(run),
      });
      expect(active?.attributes["harness.rule.content_hash"]).toMatch(/^[0-9a-f]{8,}/);
      expect(active?.body).toBe(`tool call in ${run}`);
      expect(active?.eventName).toBe("harness.rule.decision");
      expect(active?.resource["service.name"]).toBe("harness-rules");
      const annotate = fireRecords().find(
        (r) =>
          r.attributes["harness.target.run"] === run && r.attributes["harness.rule.name"] === "tool-annotate",
      );
      expect(annotate?.attributes["harness.rule.level"]).toBe("annotate");
    }
    // The notify fire's action outcome follows: the test fleet's notify hook ran.
    await fleet.until(
      () =>
        receiver.records.some(
          (r) => r.attributes["harness.action"] === "notify" && r.attributes["harness.action.state"] === "ok",
        ),
      "an action outcome record",
    );
    expect(await metricsUntil(fleet, /^harness_otel_exported_total [1-9]/m)).not.toMatch(
      /^harness_otel_dropped_total\{/m,
    );
  });

  it("a collector down loses nothing in the journal and counts drops", async () => {
    const fleet = await fleetExportingTo(`http://127.0.0.1:${await freePort()}/v1/logs`, "http/protobuf");
    await append(fleet, 5);
    const text = await metricsUntil(fleet, /^harness_otel_dropped_total\{reason="export_failed"\} [1-9]/m);
    expect(text).toMatch(/^harness_otel_exported_total 0$/m);
    expect(journalRows(fleet, { kind: "run_event" }).map((r) => r.event.run)).toEqual(
      Array.from({ length: 5 }, (_, i) => `impl#${i + 1}`),
    );
    // Every fire is in the decision store as if no collector were configured.
    expect(fires(fleet, { rule: "tool-notify" })).toHaveLength(5);
  });

  it("a hostile message is bounded and its escapes are data", async () => {
    const receiver = new OtlpReceiver();
    cleanups.push(() => receiver.stop());
    const metrics = new DaemonMetrics();
    const exp = startDecisionExport({
      config: { endpoint: await receiver.start(), protocol: "http/protobuf", headersFile: undefined },
      headers: {},
      metrics,
      serviceInstance: "test",
      serviceVersion: "0.0.0",
      delayMs: 10,
    });
    const message = `\u001b]0;pwned\u0007\u001b[2J${"x".repeat(100_000)}`;
    exp.observer({ kind: "fire", fire: hostileFire(message) });
    await exp.flush();
    await exp.shutdown();
    expect(receiver.contentTypes).toEqual(new Set(["application/x-protobuf"]));
    const body = receiver.records[0]?.body ?? "";
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_CHARS + 20);
    const control = (c: string) => {
      const n = c.codePointAt(0) as number;
      return n <= 0x08 || (n >= 0x0b && n <= 0x1f) || (n >= 0x7f && n <= 0x9f);
    };
    expect([...body].filter(control)).toEqual([]);
    expect(body.startsWith("\uFFFD]0;pwned\uFFFD\uFFFD[2Jxxx")).toBe(true);
    expect(receiver.records[0]?.attributes["harness.rule.name"]).toBe("hostile");
  });

  it("records still unsent when the export stops are counted dropped", async () => {
    // A collector that takes the request and never answers: the batch is in flight at the stop.
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          silent.closeAllConnections();
          silent.close(() => resolve());
        }),
    );
    const metrics = new DaemonMetrics();
    const exp = startDecisionExport({
      config: {
        endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/logs`,
        protocol: "http/protobuf",
        headersFile: undefined,
      },
      headers: {},
      metrics,
      serviceInstance: "test",
      serviceVersion: "0.0.0",
      delayMs: 10,
    });
    for (let i = 0; i < 3; i++) exp.observer({ kind: "fire", fire: { ...hostileFire("m"), id: `f${i}` } });
    await exp.shutdown();
    const dropped = async () =>
      (await metrics.otelDropped.get()).values.map((v) => [v.labels.reason, v.value]);
    expect(await dropped()).toEqual([["stopped", 3]]);
    expect((await metrics.otelExported.get()).values[0]?.value ?? 0).toBe(0);
  });

  it("a shadow fire is exported with its mode", () => {
    const r = decisionRecord({ kind: "fire", fire: { ...hostileFire("m"), mode: "shadow", actions: [] } });
    expect(r.attributes).toMatchObject({ "harness.rule.mode": "shadow", "harness.decision": "fire" });
  });

  it("a headers file holds Name: value lines, and nothing else", () => {
    expect(parseOtlpHeaders("# key\nAuthorization: Bearer abc\nX-Tenant: t1\n", "h")).toEqual({
      Authorization: "Bearer abc",
      "X-Tenant": "t1",
    });
    expect(() => parseOtlpHeaders("no colon here\n", "h")).toThrow(/h:1:1: want `Name: value`/);
    expect(() => parseOtlpHeaders("X: \u001b[2J\n", "h")).toThrow(/h:1:4: the value of X/);
  });
});

describe("decisions taken without a rule fire", () => {
  it("the loop guard's stop of a hook-fed run reaches the collector", async () => {
    const receiver = new OtlpReceiver();
    cleanups.push(() => receiver.stop());
    const d = await AgentsDaemon.start({
      config: `[otel]\nendpoint = "${await receiver.start()}"\nprotocol = "http/protobuf"\n`,
    });
    cleanups.push(() => d.dispose());
    const s = session("worker", "s1");
    await d.hookRows("ledger", [s.opened()]);
    const same = s.tool({ tool: "Read", action: "read", digest: "a".repeat(64) });
    await d.hookRows("observer", Array(8).fill(same));
    await d.settled();
    const [trip] = d.rows("loop_stopped");
    const tripped = journalRows(d, { kind: "run_event", type: "tool" }).at(-1)?.seq;
    await d.fleet.until(
      () => receiver.records.some((r) => r.attributes["harness.decision"] === "loop_stop"),
      "the loop guard's record",
    );
    const record = receiver.records.find((r) => r.attributes["harness.decision"] === "loop_stop");
    expect(record?.attributes).toEqual({
      "harness.decision": "loop_stop",
      "harness.action": "stop",
      "harness.stop.id": `journal:${trip?.seq}`,
      "harness.journal.seq": tripped,
      "harness.event.kind": "run_event",
      "harness.event.type": "tool",
      "harness.tool": "Read",
      "harness.target.kind": "run",
      "harness.target.harness": "worker",
      "harness.target.run": s.run,
      "gen_ai.guardrail.component.name": "harness-rules",
      "gen_ai.guardrail.verdict.type": "deny",
      "gen_ai.guardrail.action.type": "block",
      "gen_ai.guardrail.target.type": "input",
      "gen_ai.guardrail.target.subtype": "tool_call",
    });
    expect(record?.severityText).toBe("ERROR");
    expect(record?.body).toBe(`run ${s.run} stopped by the loop guard: 8 identical calls of Read in a row`);
  });

  it("a live tool call its fail mode answered reaches the collector", async () => {
    const receiver = new OtlpReceiver();
    cleanups.push(() => receiver.stop());
    const d = await AgentsDaemon.start({
      config: `[otel]\nendpoint = "${await receiver.start()}"\nprotocol = "http/json"\n[agents]\nlisten = ""\non_unreachable = "deny"\n`,
    });
    cleanups.push(() => d.dispose());
    // An evaluator that never gets to the attempt within the budget.
    d.app.daemon.evaluated = async () => false;
    const answer = await postHook(d, claudeCode(d.fleet.root, "s1").PreToolUse);
    expect(answer).toContain('on_unreachable = \\"deny\\"');
    await d.fleet.until(
      () => receiver.records.some((r) => r.attributes["harness.decision"] === "fail_mode"),
      "the fail mode's record",
    );
    const [attempt] = journalRows(d, { kind: "attempt_event" });
    const record = receiver.records.find((r) => r.attributes["harness.decision"] === "fail_mode");
    expect(record?.attributes).toMatchObject({
      "harness.fail_mode.result": "deny",
      "harness.fail_mode.source": "global",
      "harness.journal.seq": attempt?.seq,
      "harness.tool": "Edit",
      "harness.target.harness": "impl",
      "harness.target.run": attempt?.run,
      "gen_ai.guardrail.action.type": "block",
    });
    expect(record?.body).toContain("not evaluated within 2000 ms");
  });

  it("a tool call its fail mode answered is a record naming the mode's result and source", () => {
    const r = decisionRecord({
      kind: "fail_mode",
      harness: "impl",
      run: "impl#s1",
      tool: "Bash",
      seq: 12,
      result: "deny",
      source: "global",
      reason: "not evaluated within 2000 ms",
      at: 1,
    });
    expect(r.attributes).toEqual({
      "harness.decision": "fail_mode",
      "harness.fail_mode.result": "deny",
      "harness.fail_mode.source": "global",
      "harness.journal.seq": 12,
      "harness.event.kind": "attempt_event",
      "harness.event.type": "tool",
      "harness.tool": "Bash",
      "harness.target.kind": "run",
      "harness.target.harness": "impl",
      "harness.target.run": "impl#s1",
      "gen_ai.guardrail.component.name": "harness-rules",
      "gen_ai.guardrail.action.type": "block",
      "gen_ai.guardrail.target.type": "input",
      "gen_ai.guardrail.target.subtype": "tool_call",
    });
    expect(r.body).toBe(
      "tool call Bash in impl#s1 not judged by the rules (not evaluated within 2000 ms): refused by [agents] on_unreachable",
    );
    const open = decisionRecord({
      kind: "fail_mode",
      harness: "impl",
      run: "impl#s1",
      tool: "Bash\u001b[2J",
      seq: undefined,
      result: "allow",
      source: "harness",
      reason: "the journal's queue is full; the row was dropped",
      at: 1,
    });
    expect(open.attributes).not.toHaveProperty("harness.journal.seq");
    expect(open.attributes).toMatchObject({
      "harness.tool": "Bash\uFFFD[2J",
      "gen_ai.guardrail.action.type": "allow",
    });
    expect(open.body).toContain("let through by the harness's --fail mode");
  });
});

describe("the GenAI guardrail conventions' names, beside ours", () => {
  const fire = (over: Partial<Fire>) =>
    decisionRecord({ kind: "fire", fire: { ...hostileFire("m"), ...over } });

  it("verdict by the effective level, action by what the daemon enforced", () => {
    const cases: [Partial<Fire>, string, string][] = [
      [{ effectiveLevel: "annotate", action: "annotate" }, "audit", "allow"],
      [{ effectiveLevel: "notify", action: "notify" }, "warn", "allow"],
      [{ effectiveLevel: "hold", action: "hold" }, "escalate", "escalate"],
      [{ effectiveLevel: "stop", action: "stop" }, "deny", "block"],
      // Shadow: the rule says stop, nothing is enforced (the conventions' verdict/action split).
      [{ effectiveLevel: "stop", action: "none", mode: "shadow" }, "deny", "allow"],
      [{ effectiveLevel: "stop", action: "target_gone" }, "deny", "allow"],
    ];
    for (const [over, verdict, action] of cases)
      expect(fire(over).attributes, JSON.stringify(over)).toMatchObject({
        "gen_ai.guardrail.component.name": "harness-rules",
        "gen_ai.guardrail.security.policy.id": "hostile",
        "gen_ai.guardrail.verdict.type": verdict,
        "gen_ai.guardrail.action.type": action,
      });
  });
});

/** Posts a hook payload to the daemon's socket as Claude Code's http hook does: the answer's body. */
function postHook(d: AgentsDaemon, payload: unknown): Promise<string> {
  const [observer, ledger] = (["observer", "ledger"] as const).map((s) =>
    fs.readFileSync(d.fleet.tokens.get(s) as string, "utf8").trim(),
  );
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: d.fleet.socketPath,
        path: "/hooks/claude-code?harness=impl",
        method: "POST",
        headers: { authorization: `Bearer ${observer}`, "x-harness-ledger-token": ledger },
      },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve(body));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(payload));
  });
}

function hostileFire(message: string): Fire {
  return {
    id: "f1",
    rule: "hostile",
    hash: "abc123",
    seq: 7,
    at: Date.now(),
    kind: "run_event",
    type: "tool",
    target: { kind: "run", key: "impl#1", harness: "impl", run: "impl#1" },
    declaredLevel: "notify",
    effectiveLevel: "notify",
    mode: "active",
    action: "notify",
    actions: [],
    message,
    primitives: [],
  };
}

async function metricsUntil(fleet: TestFleet, want: RegExp): Promise<string> {
  let text = "";
  const start = Date.now();
  while (!want.test(text)) {
    if (Date.now() - start > 20_000) throw new Error(`metrics never matched ${want}:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
    text = await metricsText(fleet);
  }
  return text;
}
