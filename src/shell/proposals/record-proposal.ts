/**
 * What `harness rules propose` may record about a proposal (SPEC-0029 REQ-16, RuleService.RecordProposal),
 * checked against the store before anything is written:
 * - from `stored` or `waiting`: `waiting`, `opened`, `suppressed`, `duplicate` or `invalid`;
 * - from `opened`: `opened` again (a push to the same pull request), `merged` or `closed` (unmerged);
 * - `suppressed`, `duplicate`, `invalid`, `merged` and `closed` are final.
 * `opened` is refused for an expression hash a closed pull request rejected on that repo (suppressed
 * proposal), and, for a pull request not recorded before, once the repo's `max_proposals_per_week` pull
 * requests were opened there in the last 7 days (proposal cap reached). `closed` rejects the proposal's
 * expression hash on the repo, keeping `detail` (the last review comment) as the reason.
 */
import { DAY } from "../../core/durations.js";
import {
  ProposalCapReachedError,
  ProposalStateError,
  SuppressedProposalError,
  UnknownProposalError,
} from "../errors.js";
import type {
  Proposal,
  ProposalBacktest,
  ProposalChange,
  ProposalState,
  PullRequest,
} from "../store/proposal-store.js";
import type { StoreDoor } from "../store/store-door.js";
import { Turns } from "../support/turns.js";

const FINAL: readonly ProposalState[] = ["suppressed", "duplicate", "invalid", "merged", "closed"];
const FROM_UNPROPOSED: readonly ProposalState[] = ["waiting", "opened", "suppressed", "duplicate", "invalid"];
const FROM_OPENED: readonly ProposalState[] = ["opened", "merged", "closed"];

/** The states RecordProposal may record: every one but `stored`, which only propose_rule gives. */
export const RECORDABLE: readonly ProposalState[] = [...FROM_UNPROPOSED, "merged", "closed"];

export interface ProposalRecord {
  readonly id: string;
  /** A declared policy repo (the caller has checked). */
  readonly repo: { readonly name: string; readonly maxProposalsPerWeek: number };
  readonly state: ProposalState;
  readonly pull: PullRequest | undefined;
  readonly detail: string;
  readonly backtest: ProposalBacktest | undefined;
}

/** RecordProposal's records of one daemon, checked and written one at a time. */
export class ProposalRecorder {
  /**
   * A record is checked against what the store holds (the proposal's state, the repo's pull requests,
   * rejections and weekly count), then written: with awaits between, two records taking turns cannot
   * both pass a check the other's write fails (two pull requests opened past the weekly cap, one
   * proposal recorded opened and suppressed at once).
   */
  private readonly turns = new Turns();

  constructor(private readonly store: StoreDoor["proposals"]) {}

  /** Checks a record against the proposal's state and the repo's history, writes it, returns the result. */
  record(r: ProposalRecord, now: number): Promise<Proposal> {
    return this.turns.run(() => recorded(this.store, r, now));
  }
}

async function recorded(store: StoreDoor["proposals"], r: ProposalRecord, now: number): Promise<Proposal> {
  const p = await store.get(r.id);
  if (p === undefined) throw new UnknownProposalError(r.id);
  const refuse = (why: string) => new ProposalStateError(r.id, `${r.id} (${p.name}) is ${p.state}: ${why}`);
  if (FINAL.includes(p.state)) throw refuse(`that is final; it cannot become ${r.state}`);
  const allowed = p.state === "opened" ? FROM_OPENED : FROM_UNPROPOSED;
  if (!allowed.includes(r.state)) throw refuse(`it cannot become ${r.state}`);
  if (p.state === "opened" && p.policyRepo !== r.repo.name)
    throw refuse(`its pull request is on ${p.policyRepo}, not ${r.repo.name}`);
  const repo = r.repo.name;
  const rejection = await store.rejection(repo, p.expressionHash);
  const change = async (c: Omit<ProposalChange, "id" | "repo" | "backtest" | "at">): Promise<Proposal> => {
    await store.record({ ...c, id: r.id, repo, backtest: r.backtest, at: now });
    return (await store.get(r.id)) as Proposal;
  };
  switch (r.state) {
    case "opened": {
      const pull = needPull(r, refuse);
      if (rejection !== undefined) throw new SuppressedProposalError(r.id, repo, rejection.pull);
      if (p.pull !== undefined && p.pull.number !== pull.number)
        throw refuse(`its pull request is #${p.pull.number}, not #${pull.number}`);
      const known = await store.pull(repo, pull.number);
      if (known !== undefined && known.state !== "open")
        throw refuse(`pull request #${pull.number} on ${repo} is ${known.state}`);
      if (
        known === undefined &&
        (await store.pullsOpenedAfter(repo, now - 7 * DAY)) >= r.repo.maxProposalsPerWeek
      )
        throw new ProposalCapReachedError(r.id, repo, r.repo.maxProposalsPerWeek);
      return change({ state: "opened", detail: "", pull, pullState: "open", rejection: undefined });
    }
    case "merged":
    case "closed": {
      const pull = p.pull as PullRequest;
      if (r.pull !== undefined && r.pull.number !== pull.number)
        throw refuse(`its pull request is #${pull.number}, not #${r.pull.number}`);
      return change({
        state: r.state,
        detail: r.detail,
        pull,
        pullState: r.state,
        rejection:
          r.state === "closed"
            ? { repo, expressionHash: p.expressionHash, reason: r.detail, pull, at: now }
            : undefined,
      });
    }
    case "suppressed":
      if (rejection === undefined) throw refuse(`its expression hash was never rejected on ${repo}`);
      return change({
        state: "suppressed",
        detail: `rejected by pull request #${rejection.pull.number} (${rejection.pull.url})`,
        pull: undefined,
        pullState: undefined,
        rejection: undefined,
      });
    case "waiting":
    case "duplicate":
    case "invalid":
      if (r.pull !== undefined) throw refuse(`a ${r.state} proposal has no pull request`);
      return change({
        state: r.state,
        detail: r.detail,
        pull: undefined,
        pullState: undefined,
        rejection: undefined,
      });
    case "stored":
      throw refuse("only propose_rule stores a proposal");
  }
}

function needPull(r: ProposalRecord, refuse: (why: string) => Error): PullRequest {
  if (r.pull === undefined) throw refuse("recording it opened needs its pull request's number and URL");
  return r.pull;
}
