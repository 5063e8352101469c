/**
 * propose_rule's store side (SPEC-0029 REQ-15) over a real store: the evidence ids that resolve and the
 * per-run and backlog limits. The backtest is the same `replay` the daemon's
 * worker runs, called here on the test's thread (vitest cannot start a worker on the `.ts` sources);
 * the daemon-level tests in test/shell/proposals.test.ts run it in the worker.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { expressionHash } from "../../../src/core/compile-rule.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import type { Fire } from "../../../src/core/outcome.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { emptyState } from "../../../src/core/state.js";
import type { BacktestRunner, WorkerMessage } from "../../../src/shell/backtest/backtest-runner.js";
import { replay } from "../../../src/shell/backtest/replay.js";
import type { EvaluatorView } from "../../../src/shell/daemon/evaluator-view.js";
import { ProposalBacklogFullError, ProposalRunLimitError, SentinelError } from "../../../src/shell/errors.js";
import { EvidenceResolver } from "../../../src/shell/proposals/evidence.js";
import {
  MAX_BACKLOG,
  MAX_PROPOSALS_PER_RUN,
  ProposalIntake,
  type ProposeRuleCall,
  renderRuleFile,
} from "../../../src/shell/proposals/propose-rule.js";
import { promised } from "../../../src/shell/store/async-port.js";
import { DecisionStore } from "../../../src/shell/store/decision-store.js";
import { EvidenceReads } from "../../../src/shell/store/evidence-reads.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { ProposalStore } from "../../../src/shell/store/proposal-store.js";
import { createLog } from "../../../src/shell/support/log.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";
import { runs } from "../../property-runs.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 20);
const dirs: string[] = [];
const stores: OpenedStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempStore(): OpenedStore {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-proposals-"));
  dirs.push(d);
  const s = openStore(path.join(d, "harness.db"), "test");
  stores.push(s);
  return s;
}

/** A journal with a run's rows, a graph edge and a fact, a fire and its annotation. */
function seeded(): OpenedStore {
  const s = tempStore();
  const journal = new JournalTable(s.db);
  const at = NOW - DAY;
  s.db.transaction(() => {
    journal.append({
      kind: "run_event",
      source: "ledger",
      at,
      event: { type: "closed", at, harness: "nightly", run: "nightly#1", outcome: "budget_exceeded" },
    });
    journal.append({
      kind: "graph_event",
      source: "graph",
      at,
      event: {
        type: "edge_added",
        at,
        edge: "edited",
        from: "run:nightly#1",
        to: "file:forge.example/org/reduit:internal/ledger/writer.go",
        repo: "forge.example/org/reduit",
        path: "internal/ledger/writer.go",
        harness: "nightly",
        run: "nightly#1",
      },
    });
    journal.append({
      kind: "fact_event",
      source: "facts",
      at,
      event: {
        type: "recorded",
        at,
        subject: "dependency:npm/left-pad",
        harness: "nightly",
        run: "nightly#1",
      },
    });
  })();
  const fire: Fire = {
    id: "f-1-0",
    rule: "r",
    hash: "h",
    seq: 1,
    at,
    kind: "run_event",
    type: "closed",
    target: { kind: "run", key: "nightly#1", harness: "nightly", run: "nightly#1" },
    declaredLevel: "annotate",
    effectiveLevel: "annotate",
    mode: "active",
    action: "annotate",
    actions: [{ kind: "annotate", node: "tool:gopls" }],
    message: "m",
    primitives: [],
  };
  // The evaluator has not passed the rows: its cursor stays where it was.
  new DecisionStore(s.db).commit({ cursor: 0, ops: [], fires: [fire], suppressed: new Map() });
  return s;
}

/** The same replay the daemon's worker runs, on this thread, as the worker's messages. */
function inlineBacktests(s: OpenedStore): Pick<BacktestRunner, "run"> {
  return {
    run: (request) => {
      const parts: WorkerMessage[] = [];
      replay(new JournalTable(s.db), request, {
        start: (start) => parts.push({ part: "start", start }),
        fires: (fires) => parts.push({ part: "fires", fires }),
        summary: (counts) => parts.push({ part: "summary", counts }),
      });
      return (async function* () {
        yield* parts;
      })();
    },
  };
}

/** The intake over the starter pack and, as policy repo `ops`, the given rule files. */
function intake(s: OpenedStore, policy: readonly (readonly [string, string])[] = []): ProposalIntake {
  const rules = assembleRuleSet({
    starter: loadStarterPack(),
    policy: [{ repo: "ops", loads: policy.map(([file, text]) => loadRuleFile(file, text)) }],
    enforce: [],
    disable: [],
    shadowPeriod: 7 * DAY,
  });
  const evaluator: EvaluatorView = {
    rules,
    state: emptyState,
    cursor: 0,
    lastEvaluatedAt: 0,
    lagSeconds: () => 0,
  };
  return new ProposalIntake({
    proposals: promised(new ProposalStore(s.db)),
    evidence: promised(new EvidenceReads(s.db)),
    evaluator,
    backtests: inlineBacktests(s),
    metrics: new DaemonMetrics(),
    log: createLog({ level: "silent" }),
    clock: () => NOW,
    ruleMiners: () => ["miner"],
    retentionMs: () => 45 * DAY,
  });
}

const call = (name: string, run: string): ProposeRuleCall => ({
  callerRun: run,
  rule: {
    name,
    description: "a run closed over budget",
    on: "run_event",
    when: `event.outcome == "budget_exceeded" && event.harness != "${name}"`,
    level: "annotate",
    target: "run",
    message: "{{run}} over budget",
  },
  rationale: "seen three times",
  evidence: ["nightly#1"],
  dryRun: false,
});

async function refusal(p: Promise<unknown>): Promise<SentinelError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SentinelError);
  return e as SentinelError;
}

describe("evidence ids", () => {
  it("resolve to runs, journal rows, fires and graph nodes the store holds, and nothing else", async () => {
    const resolver = new EvidenceResolver(promised(new EvidenceReads(seeded().db)));
    const resolving = [
      "nightly#1",
      "seq:1",
      "seq:3",
      "f-1-0",
      "run:nightly#1",
      "harness:nightly",
      "file:forge.example/org/reduit:internal/ledger/writer.go",
      "dependency:npm/left-pad",
      "tool:gopls",
    ];
    for (const id of resolving) expect(await resolver.firstUnresolved([id]), id).toBeUndefined();
    for (const id of [
      "nightly#2",
      "seq:4",
      "seq:0",
      "f-1-1",
      "run:nightly#2",
      "harness:daily",
      "file:forge.example/org/reduit:internal/ledger/reader.go",
      "dependency:npm/right-pad",
      "run:night%6Cy#1",
      "nightly",
      "",
    ])
      expect(await resolver.firstUnresolved([...resolving, id]), id).toBe(id);
  });
});

describe("the store-time limits", () => {
  it(`stores ${MAX_PROPOSALS_PER_RUN} proposals from one run and refuses the next`, async () => {
    const s = seeded();
    const d = intake(s);
    for (let i = 1; i <= MAX_PROPOSALS_PER_RUN; i++) await d.propose(call(`r-${i}`, "miner#1"));
    const e = await refusal(d.propose(call("r-11", "miner#1")));
    expect(e).toBeInstanceOf(ProposalRunLimitError);
    // A dry run makes the same checks, so it predicts the refusal and stores nothing either way.
    expect(await refusal(d.propose({ ...call("r-11", "miner#1"), dryRun: true }))).toBeInstanceOf(
      ProposalRunLimitError,
    );
    expect(new ProposalStore(s.db).countByRun("miner#1")).toBe(MAX_PROPOSALS_PER_RUN);
  });

  it("stores no more than a run's limit from proposals made side by side", async () => {
    const s = seeded();
    const d = intake(s);
    for (let i = 1; i < MAX_PROPOSALS_PER_RUN; i++) await d.propose(call(`r-${i}`, "miner#1"));
    // Both pass the check before their backtests; only one finds room when it comes to store.
    const results = await Promise.allSettled([
      d.propose(call("r-a", "miner#1")),
      d.propose(call("r-b", "miner#1")),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(results.find((r) => r.status === "rejected")?.reason).toBeInstanceOf(ProposalRunLimitError);
    expect(new ProposalStore(s.db).countByRun("miner#1")).toBe(MAX_PROPOSALS_PER_RUN);
  });

  it(`refuses the proposal past ${MAX_BACKLOG} stored, unproposed ones with proposal_backlog_full`, async () => {
    const s = seeded();
    const d = intake(s);
    for (let run = 1; run <= MAX_BACKLOG / MAX_PROPOSALS_PER_RUN; run++)
      for (let i = 1; i <= MAX_PROPOSALS_PER_RUN; i++) await d.propose(call(`r-${run}-${i}`, `miner#${run}`));
    const e = await refusal(d.propose(call("r-6-1", "miner#6")));
    expect(e).toBeInstanceOf(ProposalBacklogFullError);
    expect(e.message).toBe(
      "proposal_backlog_full: 50 proposals are stored and not yet proposed; harness rules propose must take some first",
    );
    // Once a pass has proposed one, there is room again.
    const store = new ProposalStore(s.db);
    store.record({
      id: "p-1",
      repo: "ops",
      state: "opened",
      detail: "",
      pull: { number: 1, url: "https://forge.example/org/ops/pull/1" },
      pullState: "open",
      backtest: undefined,
      rejection: undefined,
      at: NOW,
    });
    const stored = await d.propose(call("r-6-1", "miner#6"));
    expect(stored.harness_memory_data.data.id).toBe("p-51");
    expect(store.backlog()).toBe(MAX_BACKLOG);
  });

  it("stores the rendered rule file with its content and expression hashes, and the backtest it answered", async () => {
    const s = seeded();
    const answer = await intake(s).propose(call("over-budget", "miner#1"));
    const text = renderRuleFile(call("over-budget", "miner#1").rule);
    const loaded = loadRuleFile("rules/over-budget.toml", text);
    if (!loaded.ok) throw new Error(loaded.problem.message);
    const p = new ProposalStore(s.db).get("p-1");
    expect(p).toMatchObject({
      name: "over-budget",
      fileText: text,
      contentHash: loaded.rule.hash,
      expressionHash: expressionHash("run_event", loaded.rule.normalizedWhen),
      untrusted: true,
      state: "stored",
      run: "miner#1",
    });
    expect(answer.harness_memory_data.data).toMatchObject({
      content_hash: loaded.rule.hash,
      backtest: { fires: 1, first_fires: [{ seq: 1, target: { kind: "run", key: "nightly#1" } }] },
    });
    expect(p?.backtest.fires).toBe(1);
  });
});

describe("store-time advice", () => {
  const proposing = (name: string, rule: Partial<ProposeRuleCall["rule"]>): ProposeRuleCall => {
    const c = call(name, "miner#1");
    return { ...c, rule: { ...c.rule, ...rule } };
  };
  const adviceOf = async (d: ProposalIntake, c: ProposeRuleCall) =>
    (await d.propose(c)).harness_memory_data.data.advice;

  it("finding 8: a proposal with the expression of a rule in force is advised duplicate_expression", async () => {
    const s = seeded();
    const d = intake(s);
    // The starter's `when`, laid out differently: the printer's form is the same, so is the hash.
    const c = proposing("budget-twice", {
      level: "notify",
      when: 'event.type == "closed" && event.outcome == "budget_exceeded" && count({"type": "closed", "harness": event.harness, "outcome": "budget_exceeded"}, duration("24h")) >= 2',
    });
    const advice = await adviceOf(d, c);
    expect(advice.find((a) => a.kind === "duplicate_expression")).toMatchObject({
      rule: "budget-exhaustion-recurring",
      message: expect.stringMatching(
        /^The rule budget-exhaustion-recurring in force .*propose that under the name budget-exhaustion-recurring\.$/,
      ),
    });
    expect(advice.some((a) => a.kind === "duplicate_when")).toBe(false);
    // Advice, never a refusal: it is stored, and a dry run is told the same.
    expect(new ProposalStore(s.db).get("p-1")?.name).toBe("budget-twice");
    expect(await adviceOf(d, { ...c, dryRun: true })).toEqual(advice);
  });

  it("finding 8: a proposal with the when of a rule in force on another kind is advised duplicate_when", async () => {
    const s = seeded();
    const policy = renderRuleFile({
      name: "graph-edges",
      description: "an edge",
      on: "graph_event",
      when: 'event.type == "edge_added"',
      level: "annotate",
      target: "run",
      message: "edge",
    });
    const d = intake(s, [["rules/graph-edges.toml", policy]]);
    const advice = await adviceOf(d, proposing("run-edges", { when: 'event.type=="edge_added"' }));
    expect(advice.filter((a) => a.kind.startsWith("duplicate_"))).toEqual([
      {
        kind: "duplicate_when",
        rule: "graph-edges",
        message: expect.stringContaining("from policy repo ops) has the same `when` on graph_event events"),
      },
    ]);
  });

  it("finding 8: a proposal whose backtest fired 0 times is advised no_fires and stored all the same", async () => {
    const s = seeded();
    const c = proposing("never-fires", { when: 'event.outcome == "no_such_outcome"' });
    const answer = (await intake(s).propose(c)).harness_memory_data.data;
    expect(answer.backtest.fires).toBe(0);
    expect(answer.id).toBe("p-1");
    expect(answer.advice).toEqual([
      {
        kind: "no_fires",
        message: expect.stringMatching(
          /^Its 30-day backtest fired 0 times, so it waits and spends no weekly slot unless the operator passes --include-silent/,
        ),
      },
    ]);
    expect((await intake(s).propose({ ...c, dryRun: true })).harness_memory_data.data.advice).toEqual(
      answer.advice,
    );
  });

  it("finding 8: a proposal named after a starter rule is advised starter_override", async () => {
    const s = seeded();
    const advice = await adviceOf(intake(s), call("same-file-collision", "miner#1"));
    expect(advice).toEqual([
      {
        kind: "starter_override",
        rule: "same-file-collision",
        message: expect.stringMatching(
          /^same-file-collision is the name of an embedded starter rule \(level annotate; in force\).*replaces it entirely/,
        ),
      },
    ]);
  });

  it("finding 8: a proposal that fires and duplicates nothing is given no advice", async () => {
    const answer = (await intake(seeded()).propose(call("over-budget", "miner#1"))).harness_memory_data.data;
    expect(answer.backtest.fires).toBe(1);
    expect(answer.advice).toEqual([]);
  });

  it("finding 8: advice never refuses a proposal, a dry run is told the same, and each kind is given exactly when its condition holds", async () => {
    const graphEdges: readonly [string, string] = [
      "rules/graph-edges.toml",
      renderRuleFile({
        name: "graph-edges",
        description: "an edge",
        on: "graph_event",
        when: 'event.type == "edge_added"',
        level: "annotate",
        target: "run",
        message: "edge",
      }),
    ];
    const set = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [{ repo: "ops", loads: [loadRuleFile(graphEdges[0], graphEdges[1])] }],
      shadowPeriod: 7 * DAY,
    });
    const starterNames = new Set(loadStarterPack().flatMap((l) => (l.ok ? [l.rule.spec.name] : [])));
    const budgetTwice =
      'event.type == "closed" && event.outcome == "budget_exceeded" && count({"type": "closed", "harness": event.harness, "outcome": "budget_exceeded"}, duration("24h")) >= 2';
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("same-file-collision", "cross-run-churn", "graph-edges", "over-budget", "fresh-rule"),
        fc.constantFrom(
          ["run_event", budgetTwice],
          ["run_event", 'event.outcome == "budget_exceeded"'],
          ["run_event", 'event.outcome == "no_such_outcome"'],
          ["run_event", 'event.type  ==  "edge_added"'],
          ["graph_event", 'event.type == "edge_added"'],
        ),
        fc.constantFrom("annotate", "notify"),
        async (name, [on, when], level) => {
          const c = proposing(name, { on, when, level, message: "seen" });
          const d = intake(seeded(), [graphEdges]);
          const stored = (await d.propose(c)).harness_memory_data.data;
          const dry = (await d.propose({ ...c, dryRun: true })).harness_memory_data.data;
          expect(stored.id).toMatch(/^p-\d+$/);
          expect(dry.advice).toEqual(stored.advice);
          const load = loadRuleFile(`rules/${name}.toml`, renderRuleFile(c.rule));
          if (!load.ok) throw new Error(load.problem.message);
          const hashOf = (r: { rule: { spec: { on: string }; normalizedWhen: string } }) =>
            expressionHash(r.rule.spec.on as "run_event", r.rule.normalizedWhen);
          const sameHash = set.rules.filter((r) => hashOf(r) === stored.expression_hash);
          const sameWhen = set.rules.filter(
            (r) => hashOf(r) !== stored.expression_hash && r.rule.normalizedWhen === load.rule.normalizedWhen,
          );
          const kinds = (k: string) => stored.advice.filter((a) => a.kind === k).map((a) => a.rule);
          expect(kinds("duplicate_expression")).toEqual(sameHash.map((r) => r.rule.spec.name));
          expect(kinds("duplicate_when")).toEqual(sameWhen.map((r) => r.rule.spec.name));
          expect(kinds("no_fires")).toEqual(stored.backtest.fires === 0 ? [undefined] : []);
          expect(kinds("starter_override")).toEqual(starterNames.has(name) ? [name] : []);
          for (const a of stored.advice) expect(a.message).toMatch(/^\S.*[.]$/);
        },
      ),
      { numRuns: runs(20) },
    );
  });
});
