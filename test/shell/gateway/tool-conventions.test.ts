/**
 * The gateway's tools as an agent parses them (SPEC-0029 REQ-15), over the demo's journal: a real daemon
 * that ran the demo's fleet (fires, holds placed and cleared, an enforced rule), the built `harness mcp`
 * and the MCP SDK's client. Every tool's structured content validates against its declared
 * outputSchema under ajv in strict mode; every answer follows one convention (snake_case keys, string
 * ids, numeric seqs, RFC 3339 times); truncated lists continue by cursor; the limits the intake enforces
 * are the ones the input schema declares.
 */
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ENFORCE } from "../../../src/shell/demo/demo.js";
import { holds, proposals } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { runDemoFleet } from "../tui/demo-fleet.js";
import { gatewayToken, type McpSession, mcpSession, textOf } from "./mcp-session.js";

let fleet: TestFleet;
const sessions: McpSession[] = [];
let miner: McpSession;
/** A harness of the demo's fleet, reading as any agent that is not a rule miner. */
let nightly: McpSession;

/**
 * The built daemon with `harness demo`'s rules (the starter pack, its hold rule enforced), after the
 * demo's fleet has run through it as `harness demo` runs it.
 */
async function demoJournal(seconds: number): Promise<TestFleet> {
  const f = new TestFleet({ enforce: [...DEMO_ENFORCE], config: '[memory]\nrule_miners = ["miner"]' });
  await f.start();
  await runDemoFleet(f, seconds);
  return f;
}

beforeAll(async () => {
  fleet = await demoJournal(3);
  // Three more harnesses held by the demo's enforced rule, one of them released: holds to page through.
  const spent = ["spare-1", "spare-2", "spare-3"].flatMap((harness) =>
    [1, 2].map((n) => ({
      kind: "run_event",
      type: "closed",
      harness,
      run: `${harness}#${n}`,
      outcome: "budget_exceeded",
    })),
  );
  const appended = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
    jsonl(spent),
  );
  expect(appended.code, appended.stderr).toBe(0);
  await fleet.until(
    () => holds(fleet).filter((h) => h.harness.startsWith("spare-")).length === 3,
    "the holds",
  );
  expect((await fleet.cli(["rules", "clear", "spare-2"])).code).toBe(0);
  miner = await mcpSession(fleet, await gatewayToken(fleet, "miner", "miner#1"));
  nightly = await mcpSession(fleet, await gatewayToken(fleet, "nightly", "nightly#99"));
  sessions.push(miner, nightly);
}, 120_000);

afterAll(async () => {
  for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
  await fleet?.dispose();
});

const candidate = {
  name: "verify-fails-seen",
  description: "A verify step failed.",
  on: "run_event",
  when: 'event.type == "tool" && event.action == "verify" && event.is_error',
  level: "notify",
  target: "run",
  message: "{{run}} failed a verify step",
  rationale: "Verify failures recur across the fleet.",
};

/** A call of every tool a session lists, with arguments that reach the demo's rules, fires and rows. */
async function everyCall(s: McpSession): Promise<Map<string, Record<string, unknown>>> {
  const rules = (await s.data("list_rules")).rules as { name: string }[];
  const fires = (await s.data("list_fires", { limit: 5 })).fires as { fire_id: string; seq: number }[];
  expect(rules.length).toBeGreaterThan(0);
  expect(fires.length).toBeGreaterThan(0);
  const args: Record<string, Record<string, unknown>> = {
    list_rules: {},
    get_rule: { name: "budget-exhaustion-recurring" },
    list_fires: { limit: 5 },
    explain_fire: { fire_id: fires[0]?.fire_id },
    list_holds: { include_released: true },
    query_journal: { limit: 20 },
    count_journal: { fn: "distinct", field: "run", selector: { type: "tool" }, within: "168h" },
    backtest_rule: { ...candidate, since_days: 1 },
    propose_rule: { ...candidate, evidence: [`seq:${fires[0]?.seq}`], dry_run: true },
  };
  const answers = new Map<string, Record<string, unknown>>();
  for (const tool of (await s.client.listTools()).tools) {
    const call = args[tool.name];
    expect(call, `arguments for ${tool.name}`).toBeDefined();
    const r = await s.call(tool.name, call);
    expect(r.isError, `${tool.name}: ${textOf(r)}`).toBeFalsy();
    answers.set(tool.name, r.structuredContent as Record<string, unknown>);
  }
  return answers;
}

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const isTimeKey = (k: string) => /^(at|now|since|until)$|_(at|since|until)$/.test(k);

/** Every key, with its value and where it is, of a JSON value. */
function* entries(value: unknown, at = "$"): Generator<[string, unknown, string]> {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* entries(v, `${at}[${i}]`);
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) {
      yield [k, v, `${at}.${k}`];
      yield* entries(v, `${at}.${k}`);
    }
}

describe("the gateway's tools, as an agent parses them", () => {
  it("every tool's structuredContent validates against its outputSchema", async () => {
    // Strict, allowing only type unions (`"type": ["string", "boolean"]`, valid JSON Schema that strict
    // mode asks to be allowed by name).
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats.default(ajv);
    for (const s of [miner, nightly]) {
      const answers = await everyCall(s);
      for (const tool of (await s.client.listTools()).tools) {
        expect(tool.outputSchema, tool.name).toBeDefined();
        ajv.compile(tool.inputSchema);
        const validate = ajv.compile(tool.outputSchema as object);
        const content = answers.get(tool.name);
        expect(validate(content), `${tool.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        expect(content).toMatchObject({ harness_memory_data: { trust: "untrusted" } });
      }
    }
    // The same wrapper is in the text block, for clients older than structured output.
    const r = await miner.call("list_rules");
    expect(JSON.parse(textOf(r))).toEqual(r.structuredContent);
    expect(proposals(fleet)).toEqual([]);
  }, 120_000);

  it("the real harness mcp follows one convention for ids, times and case", async () => {
    let times = 0;
    let ids = 0;
    for (const s of [miner, nightly])
      for (const [tool, content] of await everyCall(s))
        for (const [key, value, where] of entries(content)) {
          expect(key, `${tool} ${where}`).toMatch(SNAKE);
          if (key === "id" || key.endsWith("_id")) {
            ids++;
            expect(typeof value, `${tool} ${where}`).toBe("string");
          }
          if (key === "seq" || key.endsWith("_seq")) expect(typeof value, `${tool} ${where}`).toBe("number");
          if (key.endsWith("_ms")) expect(Number.isInteger(value), `${tool} ${where}`).toBe(true);
          if (isTimeKey(key)) {
            times++;
            expect(value, `${tool} ${where}`).toMatch(RFC3339);
          }
        }
    expect(ids).toBeGreaterThan(10);
    expect(times).toBeGreaterThan(10);
  }, 120_000);

  it("list_fires continues a truncated list with next_cursor, losing and repeating no fire", async () => {
    const all = (await miner.data("list_fires", { limit: 1000 })) as {
      fires: { fire_id: string }[];
      truncated: boolean;
    };
    expect(all.truncated).toBe(false);
    expect(all.fires.length).toBeGreaterThan(4);
    const paged: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < all.fires.length + 1; pages++) {
      const page = (await miner.data("list_fires", {
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      })) as {
        fires: { fire_id: string }[];
        truncated: boolean;
        next_cursor?: string;
      };
      paged.push(...page.fires.map((f) => f.fire_id));
      expect(page.truncated).toBe(page.next_cursor !== undefined);
      cursor = page.next_cursor;
      if (cursor === undefined) break;
    }
    expect(cursor).toBeUndefined();
    expect(paged).toEqual(all.fires.map((f) => f.fire_id));
    const bad = await miner.call("list_fires", { cursor: "f-1-0" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/not a next_cursor list_fires gave; leave cursor out/);
  }, 60_000);

  it("list_holds and query_journal continue by cursor too", async () => {
    const all = (await miner.data("list_holds", { include_released: true })) as {
      holds: { fire_id: string; released_at?: string }[];
    };
    expect(all.holds.length).toBeGreaterThan(3);
    expect(all.holds.some((h) => h.released_at !== undefined)).toBe(true);
    const held: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await miner.data("list_holds", {
        include_released: true,
        limit: 1,
        ...(cursor === undefined ? {} : { cursor }),
      })) as { holds: { fire_id: string }[]; next_cursor?: string };
      held.push(...page.holds.map((h) => h.fire_id));
      cursor = page.next_cursor;
    } while (cursor !== undefined && held.length <= all.holds.length);
    expect(held).toEqual(all.holds.map((h) => h.fire_id));
    const rows = (await miner.data("query_journal", { limit: 10 })) as { rows: { seq: number }[] };
    const first = (await miner.data("query_journal", { limit: 5 })) as {
      rows: { seq: number }[];
      next_cursor?: string;
    };
    expect(first.next_cursor).toBe(String(first.rows.at(-1)?.seq));
    const next = (await miner.data("query_journal", { limit: 5, cursor: first.next_cursor })) as {
      rows: { seq: number }[];
    };
    expect([...first.rows, ...next.rows].map((r) => r.seq)).toEqual(rows.rows.map((r) => r.seq));
  }, 60_000);

  it("list_rules shows a last fire only to a caller who may explain it", async () => {
    const lastOf = async (s: McpSession) =>
      ((await s.data("list_rules")).rules as { name: string; last_fire_id?: string }[]).filter(
        (r) => r.last_fire_id !== undefined,
      );
    const seenByMiner = await lastOf(miner);
    const seenByNightly = await lastOf(nightly);
    expect(seenByMiner.length).toBeGreaterThan(0);
    // Every last fire nightly is shown, it may explain.
    for (const r of seenByNightly) {
      const explained = await nightly.data("explain_fire", { fire_id: r.last_fire_id });
      expect((explained.fire as { harness: string }).harness).toBe("nightly");
    }
    // The last fires of other harnesses are left out for it, though the miner sees them.
    const others = [];
    for (const r of seenByMiner) {
      const fire = (await miner.data("explain_fire", { fire_id: r.last_fire_id })).fire as {
        harness?: string;
      };
      if (fire.harness !== "nightly") others.push(r.name);
    }
    expect(others.length).toBeGreaterThan(0);
    for (const name of others)
      expect(seenByNightly.find((r) => r.name === name)?.last_fire_id, name).toBeUndefined();
  }, 60_000);

  it("a refusal names the tool or argument to use, never a CLI command", async () => {
    const refusals: [McpSession, string, Record<string, unknown>, RegExp][] = [
      [nightly, "get_rule", { name: "no-such-rule" }, /unknown_rule: .*Call list_rules/s],
      [nightly, "explain_fire", { fire_id: "f-999999-0" }, /unknown_fire: .*Call list_fires/s],
      [nightly, "list_fires", { harness: "impl" }, /leave harness out/],
      [nightly, "list_fires", { cursor: "later" }, /leave cursor out/],
      [miner, "backtest_rule", { ...candidate, when: "event.type ==" }, /compile: .*Fix `when`/s],
    ];
    for (const [s, tool, args, says] of refusals) {
      const r = await s.call(tool, args);
      expect(r.isError, tool).toBe(true);
      expect(r.structuredContent, tool).toBeUndefined();
      expect(textOf(r), tool).toMatch(says);
      expect(textOf(r), tool).not.toMatch(/harness (rules|token|journal|policy) [a-z]/);
    }
  }, 60_000);

  it("propose_rule refuses a rationale over 2000 characters saying its length, and its schema says the limits", async () => {
    const tool = (await miner.client.listTools()).tools.find((t) => t.name === "propose_rule");
    const props = tool?.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.rationale).toMatchObject({ maxLength: 2000 });
    expect(props.evidence).toMatchObject({ minItems: 1, maxItems: 50 });
    expect(props.level?.enum).toEqual(["annotate", "notify"]);
    expect(props.target?.enum).toEqual(["run", "harness", "node", "fleet"]);
    const fires = (await miner.data("list_fires", { limit: 1 })).fires as { fire_id: string }[];
    const evidence = [fires[0]?.fire_id];
    const long = await miner.call("propose_rule", { ...candidate, evidence, rationale: "r".repeat(2001) });
    expect(long.isError).toBe(true);
    expect(textOf(long)).toMatch(/rationale is 2001 characters; at most 2000\. Shorten it/);
    expect(textOf(long)).not.toMatch(/kept|truncat/);
    // Characters are code points, as the intake counts them: 2,000 emoji (4,000 UTF-16 units) are accepted.
    const emoji = await miner.data("propose_rule", {
      ...candidate,
      evidence,
      rationale: "🔥".repeat(2000),
      dry_run: true,
    });
    expect(emoji.dry_run).toBe(true);
    // A stop still reaches the intake's named refusal, not a generic schema error.
    const stop = await miner.call("propose_rule", { ...candidate, evidence, level: "stop" });
    expect(textOf(stop)).toMatch(/invalid_level: .*Set level to "annotate" or "notify"/s);
    expect(proposals(fleet)).toEqual([]);
  }, 60_000);
});
