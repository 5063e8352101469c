/**
 * RuleService's proposal methods (SPEC-0029 REQ-16, REQ-17): ListProposals (read tier) and
 * RecordProposal (control tier). Neither stores a proposal: propose_rule does, in process
 * (`proposals/propose-rule.ts`). RecordProposal records what `harness rules propose` did with one, its
 * transitions checked by `proposals/record-proposal.ts`; a refusal is one of the spec's sentinels.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { isUnicodeText } from "../../core/admission.js";
import { DAY } from "../../core/durations.js";
import type { PolicyRepoConfig } from "../config/global-config.js";
import { InvalidArgumentError, UnknownPolicyRepoError } from "../errors.js";
import { ProposalRecorder, RECORDABLE } from "../proposals/record-proposal.js";
import {
  FIRST_FIRES,
  isProposalState,
  type Proposal,
  type ProposalBacktest,
  type PullRequest,
  proposalNumber,
  type Rejection,
} from "../store/proposal-store.js";
import type { StoreDoor } from "../store/store-door.js";
import type { Log } from "../support/log.js";
import { fireOf, replayedFireOf } from "./fire-wire.js";
import type {
  ProposalBacktest as ProposalBacktestMessage,
  ProposalInfoSchema,
  RuleService,
} from "./gen/harness/v1/rules_pb.js";
import { checkLength, limitOf, withinBudget } from "./requests.js";
import { serve } from "./status.js";

export interface ProposalServiceDeps {
  /** The proposals, through the daemon's store door. */
  readonly proposals: StoreDoor["proposals"];
  readonly clock: () => number;
  /** The policy repos of the config as last loaded. */
  readonly policyRepos: () => readonly PolicyRepoConfig[];
  readonly log: Log;
}

type ProposalInit = MessageInitShape<typeof ProposalInfoSchema>;

/** RecordProposal's `detail`: a review comment or an error, as long as a rationale may be. */
const MAX_DETAIL_CHARS = 2_000;
const MAX_URL = 2_048;

export function proposalService(
  deps: ProposalServiceDeps,
): Pick<ServiceImpl<typeof RuleService>, "listProposals" | "recordProposal"> {
  const store = deps.proposals;
  const recorder = new ProposalRecorder(store);
  const declared = (name: string): PolicyRepoConfig => {
    checkLength(name, "policy repo");
    const repo = deps.policyRepos().find((r) => r.name === name);
    if (repo === undefined) throw new UnknownPolicyRepoError(name);
    return repo;
  };

  return {
    listProposals: (req) =>
      serve("ListProposals", async () => {
        const limit = limitOf(req.limit, "proposal");
        if (req.state !== "" && !isProposalState(req.state))
          throw new InvalidArgumentError(req.state.slice(0, 32), `state must be one of the proposal states`);
        checkLength(req.after, "after");
        const after = req.after === "" ? 0 : proposalNumber(req.after);
        if (after === undefined)
          throw new InvalidArgumentError(req.after, `after must be a proposal id, p-<n>`);
        const repo = req.policyRepo === "" ? undefined : declared(req.policyRepo);
        const rows = await store.list(
          { ...(req.state === "" || !isProposalState(req.state) ? {} : { state: req.state }), after },
          limit + 1,
        );
        const { kept, truncated } = withinBudget(rows, limit, (p) => [
          p.fileText,
          p.rationale,
          p.stateDetail,
          ...p.evidence,
          ...p.backtest.firstFires.map((f) => f.message),
        ]);
        const proposals: ProposalInit[] = [];
        for (const p of kept)
          proposals.push(
            proposalInfo(
              p,
              repo === undefined ? undefined : await store.rejection(repo.name, p.expressionHash),
            ),
          );
        return {
          proposals,
          truncated,
          ...(repo === undefined
            ? {}
            : {
                opened7d: await store.pullsOpenedAfter(repo.name, deps.clock() - 7 * DAY),
                maxProposalsPerWeek: repo.maxProposalsPerWeek,
              }),
        };
      }),

    recordProposal: (req) =>
      serve(`RecordProposal ${req.id.slice(0, 32)}`, async () => {
        if (req.id === "") throw new InvalidArgumentError("", "RecordProposal needs the proposal's id");
        checkLength(req.id, "proposal id");
        if (req.policyRepo === "")
          throw new InvalidArgumentError(req.id, "RecordProposal needs the policy repo it proposed to");
        const repo = declared(req.policyRepo);
        const state = req.state;
        if (!isProposalState(state) || !RECORDABLE.includes(state))
          throw new InvalidArgumentError(
            req.id,
            `state ${JSON.stringify(state.slice(0, 32))} is not one RecordProposal records (${RECORDABLE.join(", ")})`,
          );
        const detail = checkedDetail(req.id, req.detail);
        const recorded = await recorder.record(
          {
            id: req.id,
            repo,
            state,
            pull: pullOf(req.id, req.prNumber, req.prUrl),
            detail,
            backtest: req.backtest === undefined ? undefined : backtestOf(req.id, req.backtest),
          },
          deps.clock(),
        );
        deps.log.info(
          {
            proposal: recorded.id,
            rule: recorded.name,
            hash: recorded.contentHash,
            repo: repo.name,
            state: recorded.state,
            pr: recorded.pull?.number,
          },
          "rule proposal recorded",
        );
        return { proposal: proposalInfo(recorded) };
      }),
  };
}

function checkedDetail(id: string, detail: string): string {
  const chars = [...detail].length;
  if (chars > MAX_DETAIL_CHARS)
    throw new InvalidArgumentError(id, `detail is ${chars} characters long; at most ${MAX_DETAIL_CHARS}`);
  if (!isUnicodeText(detail)) throw new InvalidArgumentError(id, "detail is not well-formed Unicode");
  return detail;
}

/** The request's pull request: both its number and its http(s) URL, or neither. */
function pullOf(id: string, number: bigint, url: string): PullRequest | undefined {
  if (number === 0n && url === "") return undefined;
  if (number <= 0n || number > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidArgumentError(id, `pr_number must be a pull request's number, not ${number}`);
  if (url === "" || url.length > MAX_URL || !/^https?:\/\/\S+$/.test(url))
    throw new InvalidArgumentError(id, "pr_url must be the pull request's http(s) URL");
  return { number: Number(number), url };
}

/** A pass's backtest summary, checked field by field before the store keeps it. */
function backtestOf(id: string, b: ProposalBacktestMessage): ProposalBacktest {
  if (b.firstFires.length > FIRST_FIRES)
    throw new InvalidArgumentError(id, `a backtest summary carries at most ${FIRST_FIRES} fires`);
  const n = (v: bigint, what: string): number => {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new InvalidArgumentError(id, `backtest ${what} ${v} is out of range`);
    return Number(v);
  };
  return {
    sinceMs: n(b.sinceMs, "since_ms"),
    atMs: n(b.atMs, "at_ms"),
    rows: n(b.rows, "rows"),
    fires: n(b.fires, "fires"),
    evalErrors: n(b.evalErrors, "eval_errors"),
    storeErrors: n(b.storeErrors, "store_errors"),
    firstFires: b.firstFires.map((f) => replayedFireOf(f, (m) => new InvalidArgumentError(id, m))),
  };
}

/** A proposal as the service sends it, with the rejection of its hash on the repo asked about. */
function proposalInfo(p: Proposal, rejected?: Rejection): ProposalInit {
  const b = p.backtest;
  return {
    ...(rejected === undefined
      ? {}
      : {
          rejected: {
            policyRepo: rejected.repo,
            prNumber: BigInt(rejected.pull.number),
            prUrl: rejected.pull.url,
            reason: rejected.reason,
            rejectedAtMs: BigInt(rejected.at),
          },
        }),
    id: p.id,
    name: p.name,
    fileText: p.fileText,
    on: p.on,
    level: p.level,
    contentHash: p.contentHash,
    expressionHash: p.expressionHash,
    rationale: p.rationale,
    evidence: [...p.evidence],
    run: p.run,
    untrusted: p.untrusted,
    state: p.state,
    stateDetail: p.stateDetail,
    policyRepo: p.policyRepo ?? "",
    prNumber: BigInt(p.pull?.number ?? 0),
    prUrl: p.pull?.url ?? "",
    backtest: {
      sinceMs: BigInt(b.sinceMs),
      atMs: BigInt(b.atMs),
      rows: BigInt(b.rows),
      fires: BigInt(b.fires),
      evalErrors: BigInt(b.evalErrors),
      storeErrors: BigInt(b.storeErrors),
      firstFires: b.firstFires.map(fireOf),
    },
    createdAtMs: BigInt(p.at),
    updatedAtMs: BigInt(p.updatedAt),
  };
}
