/**
 * RecordProposal's checks over the store's asynchronous door, on both backends: records asked for side
 * by side are checked and written one at a time, so none passes a check that another's write has made
 * false.
 */
import { describe, expect, it } from "vitest";
import { ProposalCapReachedError, ProposalStateError } from "../../../src/shell/errors.js";
import { type ProposalRecord, ProposalRecorder } from "../../../src/shell/proposals/record-proposal.js";
import type { StoreDoor } from "../../../src/shell/store/store-door.js";
import { BACKENDS, freshDoors } from "../store/fresh-doors.js";

const door = freshDoors("record_proposal");
const NOW = Date.UTC(2026, 0, 20);

/** `n` stored proposals, p-1 to p-n, each with its own expression hash. */
async function proposalsOf(n: number, backend: StoreDoor["backend"]): Promise<StoreDoor["proposals"]> {
  const { proposals } = await door(backend);
  for (let i = 1; i <= n; i++)
    await proposals.insert({
      name: `r-${i}`,
      fileText: "",
      on: "run_event",
      level: "notify",
      contentHash: `c-${i}`,
      expressionHash: `e-${i}`,
      rationale: "",
      evidence: [],
      run: "miner#1",
      backtest: { sinceMs: 0, atMs: NOW, rows: 0, fires: 0, evalErrors: 0, storeErrors: 0, firstFires: [] },
      at: NOW,
    });
  return proposals;
}

const opened = (id: string, number: number): ProposalRecord => ({
  id,
  repo: { name: "ops", maxProposalsPerWeek: 2 },
  state: "opened",
  pull: { number, url: `https://forge.example/org/ops/pull/${number}` },
  detail: "",
  backtest: undefined,
});

describe.each(BACKENDS)("records side by side on %s", (backend) => {
  it("open no more pull requests than the repo's weekly cap", async () => {
    const proposals = await proposalsOf(3, backend);
    const recorder = new ProposalRecorder(proposals);
    await recorder.record(opened("p-1", 1), NOW);
    const results = await Promise.allSettled([
      recorder.record(opened("p-2", 2), NOW),
      recorder.record(opened("p-3", 3), NOW),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ProposalCapReachedError);
    expect(await proposals.pullsOpenedAfter("ops", 0)).toBe(2);
  });

  it("of one proposal, check the second against the state the first wrote", async () => {
    const proposals = await proposalsOf(1, backend);
    const recorder = new ProposalRecorder(proposals);
    const results = await Promise.allSettled([
      recorder.record({ ...opened("p-1", 1), state: "duplicate", pull: undefined }, NOW),
      recorder.record(opened("p-1", 1), NOW),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ProposalStateError);
    expect((await proposals.get("p-1"))?.state).toBe("duplicate");
  });
});
