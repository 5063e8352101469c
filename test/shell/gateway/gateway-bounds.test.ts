/**
 * The gateway under hostile input and load, and REQ-17's "no RPC stores a proposal", against a real
 * daemon through `harness mcp` and the MCP SDK's client: oversized strings, deep JSON, wrong types,
 * 10,000 evidence ids and a `when` built to exhaust the cost limit each get a clear tool error in
 * bounded time, and the server keeps serving; backtests from two MCP sessions and the CLI share the
 * daemon's two slots and a third is refused RESOURCE_EXHAUSTED, never left to hang; and no ConnectRPC
 * method of any service the daemon serves stores a proposal.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { AgentStatusService } from "../../../src/shell/rpc/gen/harness/v1/agent_status_pb.js";
import { AgentService } from "../../../src/shell/rpc/gen/harness/v1/agents_pb.js";
import { JournalService } from "../../../src/shell/rpc/gen/harness/v1/journal_pb.js";
import { JournalQueryService } from "../../../src/shell/rpc/gen/harness/v1/journal_query_pb.js";
import { RuleService } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { TokenService } from "../../../src/shell/rpc/gen/harness/v1/tokens_pb.js";
import { METHOD_TIERS } from "../../../src/shell/rpc/tiers.js";
import { journalCount, proposals } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { gatewayToken, type McpSession, mcpSession, textOf } from "./mcp-session.js";

/** Tool rows: a backtest firing on each streams megabytes, more than the sockets between buffer. */
const ROWS = 20_000;
let fleet: TestFleet;
const sessions: McpSession[] = [];

beforeAll(async () => {
  fleet = new TestFleet({ config: '[memory]\nrule_miners = ["miner"]' });
  await fleet.start();
  // Enough tool rows that a backtest of a rule firing on each streams more than the sockets buffer.
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    kind: "run_event",
    type: "tool",
    harness: "nightly",
    run: `nightly#${i}`,
    tool: "Bash",
    action: "exec",
    is_error: i % 3 === 0,
  }));
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
    jsonl(rows),
  );
  expect(r.code, r.stderr).toBe(0);
  await fleet.until(() => journalCount(fleet) >= ROWS, "the rows", 60_000);
}, 90_000);

afterAll(async () => {
  for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
  await fleet.dispose();
});

async function miner(run = "miner#1"): Promise<McpSession> {
  const s = await mcpSession(fleet, await gatewayToken(fleet, "miner", run));
  sessions.push(s);
  return s;
}

const candidate = {
  name: "bash-errors",
  description: "A Bash call failed.",
  on: "run_event",
  when: 'event.type == "tool" && event.is_error',
  level: "notify",
  target: "run",
  message: "{{run}} Bash failed",
  rationale: "Bash failures recur.",
  evidence: ["seq:1"],
};

/** A call that must end within the limit: never a hang. */
async function timed<T>(call: Promise<T>, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, limit]);
  } finally {
    clearTimeout(timer);
  }
}

const proposalCount = () => proposals(fleet).length;

/** A call that must come back as a tool error matching `text` within `ms`. */
async function refusedWithin(s: McpSession, args: Record<string, unknown>, text: RegExp, ms = 10_000) {
  const started = Date.now();
  const r = await s.call("propose_rule", args);
  expect(Date.now() - started).toBeLessThan(ms);
  expect(r.isError, textOf(r)).toBe(true);
  expect(textOf(r)).toMatch(text);
}

describe("hostile tool input", () => {
  it("gets a clear tool error in bounded time, and the server keeps serving", async () => {
    const s = await miner();
    await refusedWithin(s, { ...candidate, name: "n".repeat(100_000) }, /Input validation error.*name/s);
    await refusedWithin(
      s,
      { ...candidate, rationale: "r".repeat(3_000) },
      /rationale is 3000 characters; at most 2000\./,
    );
    let deep: unknown = "seq:1";
    for (let i = 0; i < 2_000; i++) deep = [deep];
    await refusedWithin(s, { ...candidate, evidence: deep }, /Input validation error.*evidence/s);
    await refusedWithin(s, { ...candidate, evidence: "seq:1" }, /Input validation error.*evidence/s);
    await refusedWithin(s, { ...candidate, dry_run: "yes" }, /Input validation error.*dry_run/s);
    await refusedWithin(s, { ...candidate, on: 7 }, /Input validation error.*on/s);
    await refusedWithin(
      s,
      { ...candidate, evidence: Array.from({ length: 10_000 }, (_, i) => `seq:${i}`) },
      /1 to 50 evidence ids, not 10000/,
    );
    await refusedWithin(
      s,
      {
        ...candidate,
        when: 'event.paths.all(p, event.paths.all(q, event.paths.exists(r, p + q + r == "x")))',
      },
      /cost_estimate|comprehension/,
    );
    const bad = await s.call("count_journal", { selector: { summary: "x" }, within: "1h" });
    expect(textOf(bad)).toMatch(/not an indexed field/);
    const late = await s.call("query_journal", { since: "yesterday" });
    expect(textOf(late)).toMatch(/not an RFC 3339 time/);
    expect(proposalCount()).toBe(0);
    // The same session still answers.
    expect((await s.data("list_rules")).rules).toBeInstanceOf(Array);
  }, 60_000);

  it("a message over the 4 MiB limit ends that session only, in bounded time", async () => {
    const s = await miner();
    const started = Date.now();
    const outcome = await s.call("propose_rule", { ...candidate, when: "x".repeat(5 * 1024 * 1024) }).then(
      (r) => (r.isError ? "tool error" : "answered"),
      () => "session ended",
    );
    expect(outcome).toBe("session ended");
    expect(Date.now() - started).toBeLessThan(15_000);
    const next = await miner();
    expect((await next.data("list_rules")).rules).toBeInstanceOf(Array);
  }, 60_000);
});

describe("concurrent backtests", () => {
  const noisy = `name = "noisy"
description = "every tool call"
on = "run_event"
when = 'event.type == "tool"'
level = "notify"
cooldown = "1m"
target = "run"
message = "{{run}} ${"x".repeat(260)}"
`;

  it("two MCP sessions and the CLI backtesting at once: the third gets RESOURCE_EXHAUSTED, never a hang", async () => {
    const a = await miner("miner#1");
    const b = await miner("miner#2");
    const client = ruleClient({ socketPath: fleet.socketPath });
    // The CLI's backtest, and session a's, hold the two slots: a stream the client stops reading keeps
    // its slot, as a slow reader would.
    const held = new AbortController();
    const cli = client
      .backtest({ file: "rules/noisy.toml", text: noisy }, { signal: held.signal })
      [Symbol.asyncIterator]();
    expect((await cli.next()).value?.part.case).toBe("start");
    const second = new AbortController();
    const other = client
      .backtest({ file: "rules/noisy.toml", text: noisy }, { signal: second.signal })
      [Symbol.asyncIterator]();
    expect((await other.next()).value?.part.case).toBe("start");
    const file = path.join(fleet.root, "noisy.toml");
    fs.writeFileSync(file, noisy);
    const [fromA, fromB, fromCli] = await Promise.all([
      timed(
        a.call("backtest_rule", { ...candidate, name: "noisy", when: 'event.type == "tool"' }).then(textOf),
      ),
      timed(
        b.call("backtest_rule", { ...candidate, name: "noisy", when: 'event.type == "tool"' }).then(textOf),
      ),
      timed(fleet.cli(["rules", "backtest", file]).then((r) => `${r.code} ${r.stderr}`)),
    ]);
    expect(fromA).toMatch(/backtest_busy: .*running already.*\(RESOURCE_EXHAUSTED\)/s);
    expect(fromB).toMatch(/backtest_busy: .*running already.*\(RESOURCE_EXHAUSTED\)/s);
    expect(fromCli).toMatch(/^4 .*running already/s);
    // One slot free: the two sessions and the CLI race for it; each ends within the limit, with its
    // answer or RESOURCE_EXHAUSTED, and at least one gets the slot.
    second.abort();
    const race = await Promise.all([
      timed(
        a
          .call("backtest_rule", { ...candidate, name: "noisy", when: 'event.type == "tool"' })
          .then((r) => (r.isError ? textOf(r) : "ok")),
      ),
      timed(
        b
          .call("backtest_rule", { ...candidate, name: "noisy", when: 'event.type == "tool"' })
          .then((r) => (r.isError ? textOf(r) : "ok")),
      ),
      timed(fleet.cli(["rules", "backtest", file]).then((r) => (r.code === 0 ? "ok" : r.stderr))),
    ]);
    for (const outcome of race) expect(outcome).toMatch(/^ok$|running already/);
    expect(race).toContain("ok");
    held.abort();
    // Both slots free again: a session's backtest runs to its summary.
    let summary: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && summary === undefined; i++) {
      const r = await a.call("backtest_rule", { ...candidate, name: "noisy", when: 'event.type == "tool"' });
      if (!r.isError) summary = JSON.parse(textOf(r)).harness_memory_data.data.summary;
      else await new Promise((res) => setTimeout(res, 50));
    }
    expect(summary?.fires).toBe(ROWS);
  }, 90_000);
});

describe("REQ-17", () => {
  it("no ConnectRPC method stores a proposal, whatever the caller's tier", async () => {
    const control = await readTokenFile(controlTokenPath(fleet.env));
    const transport = createConnectTransport({
      httpVersion: "1.1",
      baseUrl: "http://localhost",
      nodeOptions: { socketPath: fleet.socketPath },
      interceptors: [
        (next) => (req) => {
          req.header.set("Authorization", `Bearer ${control}`);
          return next(req);
        },
      ],
    });
    const before = proposalCount();
    // TokenService last: its RotateControlToken (last of its methods) replaces the token these calls carry.
    const services = [
      JournalQueryService,
      RuleService,
      JournalService,
      AgentService,
      AgentStatusService,
      TokenService,
    ];
    const called: string[] = [];
    for (const service of services)
      for (const method of service.methods) {
        const name = `${service.typeName}/${method.name}`;
        called.push(name);
        const c = createClient(service, transport) as unknown as Record<
          string,
          (req: unknown, opts: unknown) => unknown
        >;
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), 2_000);
        try {
          const r = c[method.localName]?.({}, { signal: ac.signal });
          if (method.methodKind === "server_streaming") for await (const _ of r as AsyncIterable<unknown>);
          else await r;
        } catch {
          // Refused or cut off: what matters is what it stored.
        } finally {
          clearTimeout(timer);
        }
      }
    // Every method the daemon serves was called.
    expect(called.sort()).toEqual([...METHOD_TIERS.keys()].sort());
    expect(proposalCount()).toBe(before);
  }, 60_000);
});
