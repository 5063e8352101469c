/**
 * Rule proposals (SPEC-0029 REQ-15, REQ-16, REQ-17, REQ-20) in a real daemon process: propose_rule
 * through a stand-in gateway calling it in the daemon's process (no RPC stores a proposal), and
 * ListProposals and RecordProposal over the daemon's real socket.
 */
import * as http from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import { renderRuleFile } from "../../../src/shell/proposals/propose-rule.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { ErrorDetailSchema, ErrorReason } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { fires, journalCount, proposals } from "../../support/store-reads.js";
import { type CliResult, jsonl, TestFleet } from "../daemon-harness.js";

const MINER = "miner";
const CONFIG = [
  "[memory]",
  `rule_miners = ["${MINER}"]`,
  "[policy_repo.ops]",
  'remote = "/nonexistent/ops.git"',
  "max_proposals_per_week = 3",
].join("\n");

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** One propose_rule call through the stand-in gateway. */
function propose(f: TestFleet, call: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: f.gatewaySocket, method: "POST", path: "/", timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(call));
  });
}

/** A `when` of its own per name, so that each proposal has its own expression hash. */
const whenOf = (name: string) =>
  `event.type == "closed" && event.outcome == "budget_exceeded" && event.harness != "${name}"`;

const rule = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  description: "a harness closes runs over budget again and again",
  on: "run_event",
  when: whenOf(name),
  level: "notify",
  target: "run",
  message: "{{harness}}: {{run}} closed over budget",
  ...over,
});

const call = (name: string, over: Record<string, unknown> = {}, run = `${MINER}#1`) => ({
  callerRun: run,
  rule: rule(name),
  rationale: "Three runs of nightly closed over budget this week; the operator should hear of it.",
  evidence: ["nightly#1"],
  dryRun: false,
  ...over,
});

const budget = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: "nightly",
  run: `nightly#${n}`,
  outcome: "budget_exceeded",
});

const memoryData = (a: Answer) => {
  const wrapped = a.body.harness_memory_data as Record<string, unknown>;
  expect(wrapped).toMatchObject({ version: 1, source: "propose_rule", trust: "untrusted" });
  return wrapped.data as Record<string, unknown>;
};

async function ledger(f: TestFleet, rows: readonly Record<string, unknown>[]): Promise<CliResult> {
  const r = await f.cli(["journal", "append", "--token-file", f.tokens.get("ledger") as string], jsonl(rows));
  expect(r.code, r.stderr).toBe(0);
  return r;
}

const storedProposals = (f: TestFleet) =>
  proposals(f).map((p) => ({ id: p.id, name: p.name, state: p.state }));

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, "the call should have failed").toBeInstanceOf(ConnectError);
  return e as ConnectError;
}
const reasonOf = (e: ConnectError) => e.findDetails(ErrorDetailSchema)[0]?.reason;

describe("propose_rule", () => {
  const f = new TestFleet({ gateway: true, config: CONFIG });
  let said = "";
  beforeAll(async () => {
    said = await f.start();
    await ledger(f, [1, 2, 3].map(budget));
    await f.until(() => journalCount(f, { kind: "run_event" }) === 3, "3 rows");
  });
  afterAll(() => f.dispose());

  it("A miner cannot propose a stop", async () => {
    const a = await propose(f, call("budget-stop", { rule: rule("budget-stop", { level: "stop" }) }));
    expect(a.status).toBe(422);
    expect(a.body).toMatchObject({
      error: "InvalidProposalLevelError",
      reason: "INVALID_PROPOSAL_LEVEL",
      code: "InvalidArgument",
    });
    expect(a.body.message).toMatch(/^invalid_level: /);
    expect(storedProposals(f)).toEqual([]);
  });

  it("refuses hold too, and any level but annotate or notify, storing nothing", async () => {
    for (const level of ["hold", "Notify", "", 3]) {
      const a = await propose(f, call("budget-hold", { rule: rule("budget-hold", { level }) }));
      expect(a.body.reason, String(level)).toBe("INVALID_PROPOSAL_LEVEL");
    }
    expect(storedProposals(f)).toEqual([]);
  });

  it("refuses at store time what the loader refuses: schema, compile and cost, each with its reason", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { message: "{{harness}} said {{summary}}" },
        "RULE_SCHEMA",
        /schema: unknown placeholder \{\{summary\}\}/,
      ],
      [
        { target: "fleet", level: "annotate" },
        "RULE_SCHEMA",
        /target fleet is allowed only with level notify/,
      ],
      [{ when: 'event.outcom == "failed"' }, "COMPILE", /compile: /],
      [
        {
          when: "event.paths.all(a, event.paths.all(b, a.matches(b) && b.matches(a) && a.contains(b) && b.contains(a)))",
        },
        "COST_ESTIMATE",
        /cost_estimate: estimated cost up to \d+ exceeds the limit of 5000/,
      ],
    ];
    for (const [over, reason, message] of cases) {
      const a = await propose(f, call("bad-rule", { rule: rule("bad-rule", over) }));
      expect(a.body.reason, JSON.stringify(over)).toBe(reason);
      expect(a.body.message).toMatch(/^rules\/bad-rule\.toml/);
      expect(a.body.message).toMatch(message);
    }
    expect(storedProposals(f)).toEqual([]);
  });

  it("refuses an evidence id that resolves to nothing, and a caller that is not a rule miner", async () => {
    for (const id of [
      "nightly#404",
      "seq:999999",
      "f-1-9",
      "file:forge.example/org/x:nowhere.go",
      "no id at all",
    ]) {
      const a = await propose(f, call("budget-notify", { evidence: ["nightly#1", id] }));
      expect(a.body.reason, id).toBe("UNKNOWN_EVIDENCE");
    }
    const notMiner = await propose(f, call("budget-notify", {}, "nightly#9"));
    expect(notMiner.body).toMatchObject({ reason: "NOT_RULE_MINER", code: "PermissionDenied" });
    const noEvidence = await propose(f, call("budget-notify", { evidence: [] }));
    expect(noEvidence.body.reason).toBe("INVALID_ARGUMENT");
    const tooMuch = await propose(
      f,
      call("budget-notify", { evidence: Array.from({ length: 51 }, (_, i) => `e${i}`) }),
    );
    expect(tooMuch.body.message).toMatch(/1 to 50 evidence ids, not 51/);
    const long = await propose(f, call("budget-notify", { rationale: "x".repeat(2_001) }));
    expect(long.body.message).toMatch(/2001 characters long; at most 2000/);
    expect(storedProposals(f)).toEqual([]);
  });

  it("a dry run answers as a store would, wrapped as untrusted memory data, and stores nothing", async () => {
    const a = await propose(
      f,
      call("budget-notify", { dryRun: true, evidence: ["nightly#1", "seq:1", "run:nightly#2"] }),
    );
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const data = memoryData(a);
    const loaded = loadRuleFile("rules/budget-notify.toml", renderRuleFile(rule("budget-notify")));
    if (!loaded.ok) throw new Error(loaded.problem.message);
    expect(data).toMatchObject({ dry_run: true, name: "budget-notify", content_hash: loaded.rule.hash });
    expect(data.id).toBeUndefined();
    expect(data.backtest).toMatchObject({ fires: 3, eval_errors: 0, store_errors: 0 });
    expect(storedProposals(f)).toEqual([]);
  });

  it("stores a valid proposal untrusted with the caller's run, answering its id, hash and 30-day backtest", async () => {
    const a = await propose(f, call("budget-notify"));
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const data = memoryData(a);
    expect(data).toMatchObject({ id: "p-1", dry_run: false, name: "budget-notify" });
    const backtest = data.backtest as { fires: number; first_fires: Record<string, unknown>[] };
    expect(backtest.fires).toBe(3);
    expect(backtest.first_fires.map((x) => x.target)).toEqual(
      [1, 2, 3].map((n) => ({ kind: "run", key: `nightly#${n}` })),
    );
    expect(proposals(f)).toMatchObject([
      {
        name: "budget-notify",
        run: `${MINER}#1`,
        untrusted: true,
        state: "stored",
        level: "notify",
        contentHash: data.content_hash,
      },
    ]);
  });

  it("A stored proposal is never evaluated live", async () => {
    await ledger(f, [4, 5].map(budget));
    await f.until(() => journalCount(f, { kind: "run_event" }) === 5, "5 rows");
    const client = ruleClient({ socketPath: f.socketPath });
    const status = await client.getStatus({});
    expect(status.lastSeq).toBeGreaterThan(0n);
    // The evaluator has passed the new rows, and no fire, rule or hold carries the proposal's name.
    const deadline = Date.now() + 10_000;
    while ((await client.getStatus({})).evaluatorCursor < status.lastSeq && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    expect((await client.getStatus({})).evaluatorCursor).toBeGreaterThanOrEqual(status.lastSeq);
    expect(fires(f, { rule: "budget-notify" })).toEqual([]);
    expect((await client.listRules({})).rules.map((r) => r.name)).not.toContain("budget-notify");
  });

  it("counts every call in harness_rule_proposals_total by result", async () => {
    for (let i = 2; i <= 7; i++) {
      const a = await propose(f, call(`budget-${i}`, { rule: rule(`budget-${i}`) }));
      expect(a.status, JSON.stringify(a.body)).toBe(200);
    }
    expect(storedProposals(f)).toHaveLength(7);
    const url = /metrics (http:\S+),/.exec(said)?.[1] as string;
    const text = await (await fetch(url)).text();
    const count = (result: string) =>
      Number(new RegExp(`harness_rule_proposals_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    // The refusals above: a stop, 4 other levels, 4 load checks, 5 evidence ids, a caller, 3 shapes.
    expect([count("stored"), count("dry_run"), count("rejected")]).toEqual([7, 1, 18]);
  });

  it("lists proposals oldest first, paged by limit and after", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const first = await client.listProposals({ limit: 3 });
    expect(first.proposals.map((p) => p.id)).toEqual(["p-1", "p-2", "p-3"]);
    expect(first.truncated).toBe(true);
    const rest = await client.listProposals({ after: "p-3", limit: 1_000 });
    expect(rest.proposals.map((p) => p.id)).toEqual(["p-4", "p-5", "p-6", "p-7"]);
    expect(rest.truncated).toBe(false);
    expect((await client.listProposals({ state: "stored" })).proposals).toHaveLength(7);
    const p1 = first.proposals[0];
    expect(p1).toMatchObject({
      name: "budget-notify",
      state: "stored",
      untrusted: true,
      run: `${MINER}#1`,
      evidence: ["nightly#1"],
      level: "notify",
    });
    expect(p1?.backtest?.fires).toBe(3n);
    expect(p1?.backtest?.firstFires.map((x) => x.targetKey)).toEqual(["nightly#1", "nightly#2", "nightly#3"]);
    expect(p1?.fileText).toContain('name = "budget-notify"');
    const e = await failure(client.listProposals({ state: "pending" }));
    expect(e.code).toBe(Code.InvalidArgument);
    expect(reasonOf(await failure(client.listProposals({ policyRepo: "nope" })))).toBe(
      ErrorReason.UNKNOWN_POLICY_REPO,
    );
  });

  describe("recording what harness rules propose did", () => {
    let control: ReturnType<typeof ruleClient>;
    const opened = (id: string, n: number) => ({
      id,
      policyRepo: "ops",
      state: "opened",
      prNumber: BigInt(n),
      prUrl: `https://forge.example/org/ops/pull/${n}`,
    });
    beforeAll(async () => {
      control = ruleClient({ socketPath: f.socketPath }, await readTokenFile(controlTokenPath(f.env)));
    });

    it("A rejection is remembered", async () => {
      await control.recordProposal(opened("p-1", 1));
      const closed = await control.recordProposal({
        id: "p-1",
        policyRepo: "ops",
        state: "closed",
        detail: "too noisy: nightly is over budget by design",
      });
      expect(closed.proposal).toMatchObject({
        state: "closed",
        prNumber: 1n,
        stateDetail: "too noisy: nightly is over budget by design",
      });
      // The same on and when under a new name, level and message, from another run: stored (p-1 is no
      // longer in the backlog, and a rejection is a repo's, not the store's), then refused `opened` there.
      const stored = await propose(
        f,
        call(
          "budget-again",
          {
            rule: rule("budget-again", {
              when: whenOf("budget-notify"),
              level: "annotate",
              message: "again",
            }),
          },
          `${MINER}#7`,
        ),
      );
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
      const id = memoryData(stored).id as string;
      const e = await failure(control.recordProposal(opened(id, 2)));
      expect(e.code).toBe(Code.FailedPrecondition);
      expect(reasonOf(e)).toBe(ErrorReason.SUPPRESSED_PROPOSAL);
      expect(e.rawMessage).toContain("https://forge.example/org/ops/pull/1");
      const listed = await control.listProposals({ policyRepo: "ops", after: "p-7" });
      expect(listed.proposals.map((p) => [p.id, p.rejected?.prNumber, p.rejected?.reason])).toEqual([
        [id, 1n, "too noisy: nightly is over budget by design"],
      ]);
      const suppressed = await control.recordProposal({ id, policyRepo: "ops", state: "suppressed" });
      expect(suppressed.proposal?.state).toBe("suppressed");
      expect(suppressed.proposal?.stateDetail).toBe(
        "rejected by pull request #1 (https://forge.example/org/ops/pull/1)",
      );
    });

    it("The cap holds", async () => {
      // p-1 opened #1 already (now closed): two more make three in the last 7 days.
      await control.recordProposal(opened("p-2", 2));
      await control.recordProposal(opened("p-3", 3));
      for (const id of ["p-4", "p-5"]) {
        const e = await failure(control.recordProposal(opened(id, 10)));
        expect(e.code).toBe(Code.ResourceExhausted);
        expect(reasonOf(e)).toBe(ErrorReason.PROPOSAL_CAP_REACHED);
        await control.recordProposal({ id, policyRepo: "ops", state: "waiting" });
      }
      const waiting = await control.listProposals({ state: "waiting", policyRepo: "ops" });
      expect(waiting.proposals.map((p) => p.id)).toEqual(["p-4", "p-5"]);
      expect([waiting.opened7d, waiting.maxProposalsPerWeek]).toEqual([3, 3]);
      // A push to a pull request already open is no new pull request: the cap does not refuse it.
      const pushed = await control.recordProposal(opened("p-3", 3));
      expect(pushed.proposal?.state).toBe("opened");
    });

    it("refuses an unknown proposal or repo, a forbidden transition, and a read caller", async () => {
      expect(
        reasonOf(await failure(control.recordProposal({ id: "p-999", policyRepo: "ops", state: "waiting" }))),
      ).toBe(ErrorReason.UNKNOWN_PROPOSAL);
      expect(
        reasonOf(await failure(control.recordProposal({ id: "p-6", policyRepo: "dev", state: "waiting" }))),
      ).toBe(ErrorReason.UNKNOWN_POLICY_REPO);
      const merged = await control.recordProposal({ id: "p-3", policyRepo: "ops", state: "merged" });
      expect(merged.proposal).toMatchObject({ state: "merged", prNumber: 3n });
      const again = await failure(control.recordProposal(opened("p-3", 3)));
      expect([again.code, reasonOf(again)]).toEqual([Code.FailedPrecondition, ErrorReason.PROPOSAL_STATE]);
      const unopened = await failure(
        control.recordProposal({ id: "p-6", policyRepo: "ops", state: "closed" }),
      );
      expect(reasonOf(unopened)).toBe(ErrorReason.PROPOSAL_STATE);
      for (const [prNumber, prUrl] of [
        [2n ** 64n - 1n, "https://forge.example/org/ops/pull/9"],
        [9n, "javascript:alert(1)"],
        [0n, "https://forge.example/org/ops/pull/9"],
      ] as const) {
        const bad = await failure(control.recordProposal({ ...opened("p-6", 9), prNumber, prUrl }));
        expect(reasonOf(bad), `${prNumber} ${prUrl}`).toBe(ErrorReason.INVALID_ARGUMENT);
      }
      const stored = await failure(control.recordProposal({ id: "p-6", policyRepo: "ops", state: "stored" }));
      expect(reasonOf(stored)).toBe(ErrorReason.INVALID_ARGUMENT);
      const reader = await failure(
        ruleClient({ socketPath: f.socketPath }).recordProposal({
          id: "p-6",
          policyRepo: "ops",
          state: "waiting",
        }),
      );
      expect(reader.code).toBe(Code.PermissionDenied);
      expect(storedProposals(f).find((p) => p.id === "p-6")?.state).toBe("stored");
    });
  });
});
