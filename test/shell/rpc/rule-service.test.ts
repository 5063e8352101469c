/**
 * RuleService's read tier (SPEC-0029 REQ-17 to REQ-19) in a real daemon process, driven by the real CLI:
 * `harness rules list | show | explain | holds` and `harness doctor`.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import {
  ErrorDetailSchema,
  ErrorReason,
  RuleService,
} from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { METHOD_TIERS } from "../../../src/shell/rpc/tiers.js";
import { actions, dropJournalRow, fires, journalRows } from "../../support/store-reads.js";
import { type CliResult, jsonl, TestFleet } from "../daemon-harness.js";

const STARTER = [
  "budget-exhaustion-recurring",
  "cross-run-churn",
  "loop-stop-recurs",
  "repeated-verify-failure",
  "restart-into-same-failure",
  "same-file-collision",
];

const budget = (harness: string, n: number) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome: "budget_exceeded",
});

const json = <T = Record<string, unknown>>(r: CliResult): T => {
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as T;
};

/** The hook's payloads; a file the hook is still writing is skipped until it is whole. */
const deliveredSafely = (f: TestFleet): Record<string, unknown>[] => {
  try {
    return f.delivered();
  } catch {
    return [];
  }
};

/** Appends rows as the run ledger and waits for the fires they should produce to commit. */
async function ledger(f: TestFleet, rows: readonly Record<string, unknown>[], count: number): Promise<void> {
  const r = await f.cli(["journal", "append", "--token-file", f.tokens.get("ledger") as string], jsonl(rows));
  expect(r.code, r.stderr).toBe(0);
  await f.until(() => fires(f).length >= count, `${count} fire(s)`);
}

describe("the read tier's table", () => {
  it("gives every RuleService method a tier, and the new read methods the read tier", () => {
    for (const m of RuleService.methods)
      expect(METHOD_TIERS.has(`${RuleService.typeName}/${m.name}`), m.name).toBe(true);
    for (const m of [
      "ListRules",
      "GetRule",
      "ListFires",
      "ExplainFire",
      "ListHolds",
      "ListAnnotations",
      "GetStatus",
    ])
      expect(METHOD_TIERS.get(`harness.v1.RuleService/${m}`), m).toBe("read");
  });
});

describe("a fleet enforcing budget-exhaustion-recurring", () => {
  const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
  beforeAll(async () => {
    await f.start();
  });
  afterAll(() => f.dispose());

  it("rules list shows the six starter rules active, the enforced hold rule at hold, the other capped", async () => {
    const { rules } = json<{ rules: Record<string, unknown>[] }>(await f.cli(["rules", "list", "--json"]));
    expect(rules.map((r) => r.name)).toEqual(STARTER);
    expect(rules.every((r) => r.state === "active" && r.source === "starter")).toBe(true);
    const level = Object.fromEntries(rules.map((r) => [r.name, [r.declared_level, r.effective_level]]));
    expect(level).toEqual({
      "budget-exhaustion-recurring": ["hold", "hold"],
      "cross-run-churn": ["annotate", "annotate"],
      "loop-stop-recurs": ["notify", "notify"],
      "repeated-verify-failure": ["notify", "notify"],
      "restart-into-same-failure": ["hold", "notify"],
      "same-file-collision": ["annotate", "annotate"],
    });
    expect(rules.find((r) => r.name === "budget-exhaustion-recurring")).toMatchObject({
      enforced: true,
      target: "harness",
      cooldown: "6h",
      fires_24h: 0,
      last_fire: null,
    });
    const table = await f.cli(["rules", "list"]);
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^NAME +SOURCE +HASH +MODE +DECLARED +EFFECTIVE +FIRES 24H\/7D +LAST FIRE$/,
    );
    expect(table.stdout).toMatch(
      /restart-into-same-failure +starter +[0-9a-f]{12} +active +hold +notify +0\/0 +-/,
    );
  });

  it("rules show adds the file, the normalized when, the cost and the enforce status", async () => {
    const shown = json(await f.cli(["rules", "show", "budget-exhaustion-recurring", "--json"]));
    expect(shown).toMatchObject({
      name: "budget-exhaustion-recurring",
      file: "starter-rules/budget-exhaustion-recurring.toml",
      enforced: true,
      effective_level: "hold",
      primitive_calls: 1,
      holds: [],
      warnings: [],
    });
    expect(shown.when).toContain('count({"type": "closed", "harness": event.harness');
    expect(shown.estimated_cost).toBeLessThanOrEqual(5000);
    const text = await f.cli(["rules", "show", "budget-exhaustion-recurring"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^enforce +listed in \[memory\.rules\] enforce$/m);
    expect(text.stdout).toMatch(/^level +declared hold, effective hold$/m);
    const capped = await f.cli(["rules", "show", "restart-into-same-failure"]);
    expect(capped.stdout).toMatch(/^enforce +not in \[memory\.rules\] enforce: acts at notify, not hold$/m);
  });

  it("rules show of an unknown rule exits 1 with the unknown-rule sentinel", async () => {
    const r = await f.cli(["rules", "show", "nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "harness rules show: unknown rule: nope is not in the rule set in force (see harness rules list)\n",
    );
    const e = await ruleClient({ socketPath: f.socketPath })
      .getRule({ name: "nope" })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectError);
    expect((e as ConnectError).code).toBe(Code.NotFound);
    expect((e as ConnectError).findDetails(ErrorDetailSchema)[0]).toMatchObject({
      reason: ErrorReason.UNKNOWN_RULE,
      subject: "nope",
    });
  });

  it("explain --harness shows each hold in force with its fire explained and how it is released", async () => {
    await ledger(f, [budget("nightly", 1), budget("nightly", 2)], 1);
    const x = json<{ holds: Record<string, unknown>[]; fires: Record<string, unknown>[] }>(
      await f.cli(["rules", "explain", "--harness", "nightly", "--json"]),
    );
    expect(x.holds).toHaveLength(1);
    expect(x.holds[0]).toMatchObject({
      harness: "nightly",
      rule: "budget-exhaustion-recurring",
      fire: { rule: "budget-exhaustion-recurring", action: "hold", effective_level: "hold" },
    });
    expect(x.holds[0]?.release).toEqual([
      expect.stringMatching(/false on every tick for 6h \(it is true now\)$/),
      "by hand: harness rules clear nightly --rule budget-exhaustion-recurring",
      expect.stringMatching(/^by a reload that leaves budget-exhaustion-recurring absent/),
    ]);
    expect(x.fires.map((r) => r.rule)).toEqual(["budget-exhaustion-recurring"]);
    const text = await f.cli(["rules", "explain", "--harness", "nightly"]);
    expect(text.stdout).toMatch(/^nightly: 1 hold in force$/m);
    expect(text.stdout).toContain("level    declared hold, effective hold: listed in [memory.rules] enforce");
    const none = await f.cli(["rules", "explain", "--harness", "impl"]);
    expect(none.stdout).toBe("impl: no hold in force\n\nimpl: no fires\n");
  });

  it("rules holds lists holds in force, and with --released those released with their cause", async () => {
    const held = await f.cli(["rules", "holds"]);
    expect(held.code).toBe(0);
    expect(held.stdout).toMatch(/^nightly +budget-exhaustion-recurring +\S+Z +f-\d+-0 +held$/m);
    expect((await f.cli(["rules", "clear", "nightly"])).code).toBe(0);
    expect((await f.cli(["rules", "holds"])).stdout).toBe("no holds in force\n");
    const released = json<{ holds: Record<string, unknown>[] }>(
      await f.cli(["rules", "holds", "--released", "--harness", "nightly", "--json"]),
    );
    expect(released.holds).toEqual([
      expect.objectContaining({
        harness: "nightly",
        release_cause: "operator",
        released_at: expect.any(String),
      }),
    ]);
  });

  it("serves annotations by node, and refuses an absurd page size with INVALID_ARGUMENT", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const { annotations } = await client.listAnnotations({ node: "harness:nightly" });
    expect(annotations.map((a) => a.rule)).toEqual(["budget-exhaustion-recurring"]);
    expect((await client.listAnnotations({ node: "harness:impl" })).annotations).toEqual([]);
    const e = (await client.listFires({ limit: 1_000_000 }).catch((x: unknown) => x)) as ConnectError;
    expect(e.code).toBe(Code.InvalidArgument);
    expect(e.findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.INVALID_ARGUMENT);
    expect((await client.listFires({ limit: 1000 })).fires).toHaveLength(1);
  });

  it("doctor passes the daemon row and the rules row of a healthy fleet", async () => {
    const r = await f.cli(["doctor"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PASS {2}daemon {2}answers on /m);
    expect(r.stdout).toMatch(
      /^PASS {2}rules {3}6 loaded \(6 active, 0 shadow\), 0 disabled; policy clones: none configured$/m,
    );
  });
});

describe("a fleet with a notify hook", () => {
  const f = new TestFleet();
  beforeAll(async () => {
    await f.start();
  });
  afterAll(() => f.dispose());

  it("The hook can explain itself (REQ-13)", async () => {
    await ledger(f, [budget("impl", 1), budget("impl", 2)], 1);
    await f.until(() => deliveredSafely(f).some((d) => d.event === "rule_fired"), "rule_fired");
    const fired = deliveredSafely(f).find((d) => d.event === "rule_fired") as Record<string, unknown>;
    const fireId = fired.fire_id as string;
    expect(fired.hint).toBe(`harness rules explain ${fireId}`);
    await f.until(() => actions(f, { state: "ok" }).length === 1, "the outcome");
    const row = journalRows(f, { kind: "run_event" }).at(-1);
    const at = new Date(row?.at ?? 0).toISOString().replace(/\.\d{3}Z$/, "Z");
    const x = json(await f.cli(["rules", "explain", fireId, "--json"]));
    const [listed] = json<{ rules: Record<string, unknown>[] }>(
      await f.cli(["rules", "list", "--json"]),
    ).rules;
    expect(x).toMatchObject({
      fire_id: fireId,
      rule: "budget-exhaustion-recurring",
      hash: listed?.hash,
      seq: row?.seq,
      row: {
        seq: row?.seq,
        kind: "run_event",
        type: "closed",
        at,
        source: "ledger",
        event: { type: "closed", harness: "impl", run: "impl#2", outcome: "budget_exceeded" },
      },
      row_pruned: false,
      now: at,
      primitives: [
        {
          fn: "count",
          selector: { kind: "run_event", type: "closed", harness: "impl", outcome: "budget_exceeded" },
          within: "24h",
          result: 2,
        },
      ],
      mode: "active",
      declared_level: "hold",
      effective_level: "notify",
      level_derivation: "declared hold, effective notify: not in [memory.rules] enforce",
      action: "notify",
      actions: [{ action: "notify", state: "ok" }],
    });
    const text = await f.cli(["rules", "explain", fireId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`fire ${fireId}: rule budget-exhaustion-recurring`);
    expect(text.stdout).toContain(`  now      ${at} (the row's admission time)`);
    expect(text.stdout).toContain(
      '    count({"kind": "run_event", "type": "closed", "harness": "impl", "outcome": "budget_exceeded"}, duration("24h")) = 2',
    );
    expect(text.stdout).toContain(
      "  level    declared hold, effective notify: not in [memory.rules] enforce",
    );
    expect(text.stdout).toMatch(/^ {4}notify: ok/m);
  });

  it("explains a fire whose journal row retention pruned, saying so; an unknown fire exits 1", async () => {
    const [fire] = fires(f);
    // A later row, so the one deleted below is not the newest: SQLite would give its seq to the next row.
    const later = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([{ kind: "run_event", type: "opened", harness: "other", run: "other#1" }]),
    );
    expect(later.code, later.stderr).toBe(0);
    await f.stop();
    // What retention does to an old row: the fire outlives it (its seq is a plain column).
    const db = new Database(f.storePath);
    dropJournalRow(db, fire?.seq as number);
    db.close();
    await f.start();
    const x = json(await f.cli(["rules", "explain", fire?.fire_id as string, "--json"]));
    expect(x).toMatchObject({ row: null, row_pruned: true, seq: fire?.seq, primitives: [{ result: 2 }] });
    expect((await f.cli(["rules", "explain", fire?.fire_id as string])).stdout).toContain(
      `row      seq ${fire?.seq} run_event closed: pruned from the journal by retention`,
    );
    const unknown = await f.cli(["rules", "explain", "f-999-0"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("harness rules explain: unknown fire: no fire f-999-0 in the fire log\n");
  });
});

const STOPPER = `name = "stopper"
description = "Stops a run opened by the trigger stop-me."
on = "run_event"
when = 'event.type == "opened" && event.trigger == "stop-me"'
level = "stop"
target = "run"
message = "{{run}} stopped by {{rule}}"
`;

const BROKEN = `name = "broken"
description = "Misspells a field."
on = "run_event"
when = 'event.outcom == "failed"'
level = "hold"
target = "harness"
message = "{{harness}} failed"
`;

describe("doctor on a fleet with rule trouble", () => {
  const f = new TestFleet({
    rules: [
      { name: "stopper", text: STOPPER },
      { name: "broken", text: BROKEN },
    ],
    enforce: ["stopper", "broken", "nope"],
  });
  beforeAll(async () => {
    await f.start();
  });
  afterAll(() => f.dispose());

  it("A disabled enforced rule fails doctor, as does an unknown enforce name; an undelivered stop warns", async () => {
    await ledger(
      f,
      [{ kind: "run_event", type: "opened", harness: "impl", run: "impl#1", trigger: "stop-me" }],
      1,
    );
    await f.until(
      () => actions(f, { action: "stop", state: "undelivered" }).length === 1,
      "the stop recorded undelivered",
    );
    const r = await f.cli(["doctor"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}rules {3}7 loaded \(7 active, 0 shadow\), 1 disabled/m);
    expect(r.stdout).toMatch(/ fail: enforced rule broken is disabled: compile: .*outcom/);
    expect(r.stdout).toContain(" fail: [memory.rules] enforce names nope, which matches no rule");
    expect(r.stdout).toContain(
      " warn: 1 rule stop recorded undelivered in the last 7 days: no [supervisor] stop command is configured",
    );
    expect(r.stdout).toContain(" warn: 1 hold in force: impl (stopper)");
    const j = json<{ status: string; checks: { name: string; status: string }[] }>(
      await f.cli(["doctor", "--json"]),
    );
    expect(j.status).toBe("fail");
    expect(j.checks.map((c) => [c.name, c.status])).toEqual([
      ["daemon", "pass"],
      ["rules", "fail"],
      ["store", "pass"],
      ["reload", "pass"],
      ["listen", "pass"],
      ["tls", "pass"],
      ["agents", "pass"],
    ]);
    const listed = json<{ rules: Record<string, unknown>[] }>(await f.cli(["rules", "list", "--json"])).rules;
    expect(listed.find((x) => x.name === "broken")).toMatchObject({
      source: "policy:test",
      state: "disabled",
      mode: "disabled: compile",
    });
    expect(listed.find((x) => x.name === "stopper")).toMatchObject({
      source: "policy:test",
      state: "active",
      effective_level: "stop",
    });
  });

  it("doctor without a daemon fails its daemon row and exits 3", async () => {
    await f.stop();
    const r = await f.cli(["doctor"]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^FAIL {2}daemon {2}no daemon answers on /m);
  });
});

describe("a fleet running a stop rule it does not enforce", () => {
  const f = new TestFleet({ rules: [{ name: "stopper", text: STOPPER }] });
  beforeAll(async () => {
    await f.start();
  });
  afterAll(() => f.dispose());

  it("Explaining a capped fire", async () => {
    await ledger(
      f,
      [{ kind: "run_event", type: "opened", harness: "impl", run: "impl#1", trigger: "stop-me" }],
      1,
    );
    const fireId = fires(f)[0]?.fire_id as string;
    const text = await f.cli(["rules", "explain", fireId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^ {2}level +declared stop, effective notify: not in \[memory\.rules\] enforce$/m,
    );
    const x = json(await f.cli(["rules", "explain", fireId, "--json"]));
    expect(x).toMatchObject({ declared_level: "stop", effective_level: "notify", action: "notify" });
    // Capped means nothing was stopped: the fire asked only for the notification.
    expect(actions(f, { action: "stop" })).toHaveLength(0);
  });
});
