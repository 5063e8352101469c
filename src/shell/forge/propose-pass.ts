/**
 * One pass of `harness rules propose` over one policy repo (SPEC-0029 REQ-16). First the token's login is
 * checked against `reviewers` (a reviewer who is the author fails the pass before anything is pushed);
 * then every pull request a proposal has open there is read back (merged → `merged`; closed unmerged →
 * `closed`, which rejects its expression hash with the last review comment as the reason); then each
 * `stored` or `waiting` proposal, oldest first, is recompiled with lint's checks (REQ-21), skipped as
 * `suppressed` (its hash was rejected there) or `duplicate` (a rule on the default branch has its hash),
 * left `waiting` once `max_proposals_per_week` pull requests were opened there in 7 days, backtested over
 * 30 days through RuleService.Backtest, committed as `rules/<name>.toml` on `<branch_prefix><name>` and
 * pushed (never forced; `branch diverged` leaves it waiting), and opened as a pull request, or pushed to
 * the one open on that branch, with reviewers and labels. Every state goes through RecordProposal.
 * A dry run does every read (it may fetch) and records, pushes, commits and opens nothing.
 */
import { ConnectError } from "@connectrpc/connect";
import type { ReplayedFire } from "../../core/backtest.js";
import { expressionHash } from "../../core/compile-rule.js";
import { DAY } from "../../core/durations.js";
import { loadRuleFile, loadRuleFileBytes } from "../../core/load-rule.js";
import type { PolicyRepoConfig } from "../config/global-config.js";
import { formatFinding } from "../lint/findings.js";
import { lintRuleFiles } from "../lint/rule-files.js";
import { readRuleFiles } from "../policy/clone.js";
import type { RuleClient } from "../rpc/client.js";
import { fireOf } from "../rpc/fire-wire.js";
import { ErrorDetailSchema, ErrorReason, type ProposalInfo } from "../rpc/gen/harness/v1/rules_pb.js";
import type { Forge, ForgePull } from "./forge.js";
import { BranchDivergedError, type ProposalClone } from "./proposal-clone.js";
import { pullBody, pullTitle } from "./pull-body.js";

export const PROPOSE_BACKTEST_SINCE = 30 * DAY;
const MAX_DETAIL = 2_000;
const FIRST_FIRES = 10;

export type Action =
  | "opened"
  | "pushed"
  | "unchanged"
  | "waiting"
  | "suppressed"
  | "duplicate"
  | "invalid"
  | "merged"
  | "closed"
  | "error";

export interface Outcome {
  readonly id: string;
  readonly name: string;
  readonly action: Action;
  readonly detail: string;
  readonly pull?: { readonly number: number; readonly url: string } | undefined;
}

export interface PassReport {
  readonly repo: string;
  readonly forge: string;
  readonly login: string;
  readonly dryRun: boolean;
  readonly outcomes: readonly Outcome[];
}

/** A `reviewers` entry is the token's own login: a forge refuses it, and it would review itself. */
export class ReviewerIsAuthorError extends Error {
  constructor(
    readonly repo: string,
    readonly login: string,
  ) {
    super(
      `[policy_repo.${repo}] reviewers lists ${login}, the login of the token in its credential_file: a pull request's author cannot review it; nothing was pushed or opened`,
    );
    this.name = "ReviewerIsAuthorError";
  }
}

/** What a backtest through the daemon gave: the summary RecordProposal keeps, and every fire. */
export type Backtest = (
  file: string,
  text: string,
  sinceMs: number,
) => Promise<{
  counts: { rows: number; fires: number; evalErrors: number; storeErrors: number };
  fires: readonly ReplayedFire[];
}>;

export interface PassDeps {
  readonly repo: PolicyRepoConfig;
  readonly shadowPeriodMs: number;
  readonly client: RuleClient;
  readonly forge: Forge;
  /** Opens the proposal clone, git authenticating as `login` with the repo's token. */
  readonly clone: (login: string) => Promise<ProposalClone>;
  readonly backtest: Backtest;
  readonly env: NodeJS.ProcessEnv;
  readonly dryRun: boolean;
  readonly now: () => number;
}

export async function proposePass(d: PassDeps): Promise<PassReport> {
  const { repo, forge } = d;
  const login = await forge.login();
  if (repo.reviewers.some((r) => r.toLowerCase() === login.toLowerCase()))
    throw new ReviewerIsAuthorError(repo.name, login);
  const outcomes: Outcome[] = [];
  const record = async (p: ProposalInfo, o: Omit<Outcome, "id" | "name">, extra: RecordExtra = {}) => {
    outcomes.push({ id: p.id, name: p.name, ...o });
    if (d.dryRun || o.action === "error" || o.action === "unchanged") return;
    const state = o.action === "pushed" ? "opened" : o.action;
    await d.client.recordProposal({
      id: p.id,
      policyRepo: repo.name,
      state,
      prNumber: BigInt(o.pull?.number ?? 0),
      prUrl: o.pull?.url ?? "",
      detail: [...o.detail].slice(0, MAX_DETAIL).join(""),
      ...(extra.backtest === undefined ? {} : { backtest: extra.backtest }),
    });
  };

  // Read back every pull request a proposal has open here; one record ends all pushed to it.
  let listing = await listAll(d.client, repo.name);
  const rejectedHere = new Map<string, { number: number; url: string }>();
  const seen = new Set<number>();
  for (const p of listing.proposals) {
    if (p.state !== "opened" || p.policyRepo !== repo.name || p.prNumber === 0n) continue;
    const number = Number(p.prNumber);
    if (seen.has(number)) continue;
    seen.add(number);
    const pull = await forge.getPull(number);
    if (pull.state === "open") continue;
    const link = { number, url: pull.url };
    if (pull.merged) await record(p, { action: "merged", detail: "", pull: link });
    else {
      const reason = await forge.lastReviewComment(number);
      await record(p, { action: "closed", detail: reason, pull: link });
      rejectedHere.set(p.expressionHash, link);
    }
  }
  if (!d.dryRun && seen.size > 0) listing = await listAll(d.client, repo.name);

  const candidates = listing.proposals.filter((p) => p.state === "stored" || p.state === "waiting");
  if (candidates.length === 0)
    return { repo: repo.name, forge: forge.kind, login, dryRun: d.dryRun, outcomes };

  const clone = await d.clone(login);
  const base = await clone.fetch(repo.branch, repo.branchPrefix);
  const onDefault = await defaultBranchHashes(clone.dir, base.tip, d.env);
  let opened = listing.opened7d;
  const cap = repo.maxProposalsPerWeek;

  for (const p of candidates) {
    const file = `rules/${p.name}.toml`;
    try {
      const lint = lintRuleFiles([{ file, bytes: new TextEncoder().encode(p.fileText) }]);
      const errors = lint.findings.filter((f) => f.severity === "error");
      if (errors.length > 0) {
        await record(p, { action: "invalid", detail: errors.map(formatFinding).join("\n") });
        continue;
      }
      const rejected = p.rejected ?? rejectedHere.get(p.expressionHash);
      if (rejected !== undefined) {
        const number = "prNumber" in rejected ? Number(rejected.prNumber) : rejected.number;
        const url = "prUrl" in rejected ? rejected.prUrl : rejected.url;
        await record(p, {
          action: "suppressed",
          detail: `its expression hash was rejected on ${repo.name} by pull request #${number} (${url})`,
          pull: { number, url },
        });
        continue;
      }
      const same = onDefault.get(p.expressionHash);
      if (same !== undefined) {
        await record(p, {
          action: "duplicate",
          detail: `${same} on ${base.branch} has the same expression hash`,
        });
        continue;
      }
      const branch = `${repo.branchPrefix}${p.name}`;
      const open = await forge.findOpenPull(branch);
      if (open === undefined && opened >= cap) {
        await record(p, {
          action: "waiting",
          detail: `${opened} pull requests were opened on ${repo.name} in the last 7 days; max_proposals_per_week is ${cap}`,
        });
        continue;
      }
      const bt = await backtestOrInvalid(d, p, file);
      if ("invalid" in bt) {
        await record(p, { action: "invalid", detail: bt.invalid });
        continue;
      }
      const summary = {
        sinceMs: BigInt(d.now() - PROPOSE_BACKTEST_SINCE),
        atMs: BigInt(d.now()),
        rows: BigInt(bt.counts.rows),
        fires: BigInt(bt.counts.fires),
        evalErrors: BigInt(bt.counts.evalErrors),
        storeErrors: BigInt(bt.counts.storeErrors),
        firstFires: bt.fires.slice(0, FIRST_FIRES).map(fireOf),
      };
      const loaded = loadRuleFile(file, p.fileText);
      const spec = loaded.ok ? loaded.rule.spec : undefined;
      const body = pullBody({
        proposalId: p.id,
        name: p.name,
        expressionHash: p.expressionHash,
        run: p.run,
        on: p.on,
        level: p.level,
        target: spec?.target ?? "",
        description: spec?.description ?? "",
        message: spec?.message ?? "",
        rationale: p.rationale,
        evidence: p.evidence,
        backtest: { sinceMs: PROPOSE_BACKTEST_SINCE, ...bt.counts },
        fires: bt.fires,
        public: repo.public,
        shadowPeriodMs: d.shadowPeriodMs,
      });
      let start: { start: string; exists: boolean };
      try {
        start = await clone.startOf(branch, base.tip);
      } catch (e) {
        if (!(e instanceof BranchDivergedError)) throw e;
        await record(p, { action: "waiting", detail: e.message });
        continue;
      }
      if (d.dryRun) {
        outcomes.push({
          id: p.id,
          name: p.name,
          action: open === undefined ? "opened" : "pushed",
          detail:
            open === undefined
              ? `would push ${file} to ${branch} and open a pull request against ${base.branch}`
              : `would push ${file} to ${branch}, the head of open pull request #${open.number}`,
          ...(open === undefined ? {} : { pull: { number: open.number, url: open.url } }),
        });
        continue;
      }
      const commit = await clone.commit(start.start, p.name, p.fileText, `${pullTitle(p.name)} (${p.id})`);
      if (commit !== undefined) {
        try {
          await clone.push(commit, branch);
        } catch (e) {
          if (!(e instanceof BranchDivergedError)) throw e;
          await record(p, { action: "waiting", detail: e.message });
          continue;
        }
      }
      let pull: ForgePull;
      if (open !== undefined) {
        pull = open;
        await forge.updateBody(open.number, body);
      } else {
        pull = await forge.openPull({ title: pullTitle(p.name), head: branch, base: base.branch, body });
        opened++;
        await forge.requestReviewers(pull.number, repo.reviewers);
        await forge.addLabels(pull.number, repo.labels);
      }
      await record(
        p,
        {
          action: open === undefined ? "opened" : "pushed",
          detail:
            open === undefined
              ? `opened on ${branch}`
              : commit === undefined
                ? `${branch} already holds this file; the body of #${open.number} was refreshed`
                : `pushed a new commit to ${branch}`,
          pull: { number: pull.number, url: pull.url },
        },
        { backtest: summary },
      );
    } catch (e) {
      outcomes.push({ id: p.id, name: p.name, action: "error", detail: errorText(e) });
    }
  }
  return { repo: repo.name, forge: forge.kind, login, dryRun: d.dryRun, outcomes };
}

interface RecordExtra {
  readonly backtest?: {
    sinceMs: bigint;
    atMs: bigint;
    rows: bigint;
    fires: bigint;
    evalErrors: bigint;
    storeErrors: bigint;
    firstFires: ReturnType<typeof fireOf>[];
  };
}

async function listAll(
  client: RuleClient,
  repo: string,
): Promise<{ proposals: ProposalInfo[]; opened7d: number }> {
  const proposals: ProposalInfo[] = [];
  let after = "";
  let opened7d = 0;
  for (;;) {
    const r = await client.listProposals({ policyRepo: repo, after, limit: 1_000 });
    proposals.push(...r.proposals);
    opened7d = r.opened7d;
    const last = r.proposals.at(-1);
    if (!r.truncated || last === undefined) break;
    after = last.id;
  }
  return { proposals, opened7d };
}

/** Expression hash → the rule file on the default branch that has it. */
async function defaultBranchHashes(
  dir: string,
  tip: string,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const blob of await readRuleFiles(dir, tip, env)) {
    if (!("bytes" in blob)) continue;
    const l = loadRuleFileBytes(blob.file, blob.bytes);
    if (l.ok) out.set(expressionHash(l.rule.spec.on, l.rule.normalizedWhen), blob.file);
  }
  return out;
}

const INVALID_REASONS = new Set([ErrorReason.RULE_SCHEMA, ErrorReason.COMPILE, ErrorReason.COST_ESTIMATE]);

/** The daemon's backtest; a refusal of the rule itself makes the proposal invalid, anything else throws. */
async function backtestOrInvalid(
  d: PassDeps,
  p: ProposalInfo,
  file: string,
): Promise<Awaited<ReturnType<Backtest>> | { invalid: string }> {
  try {
    return await d.backtest(file, p.fileText, PROPOSE_BACKTEST_SINCE);
  } catch (e) {
    if (e instanceof ConnectError) {
      const reason = e.findDetails(ErrorDetailSchema)[0]?.reason;
      if (reason !== undefined && INVALID_REASONS.has(reason)) return { invalid: e.rawMessage };
    }
    throw e;
  }
}

const errorText = (e: unknown): string =>
  e instanceof ConnectError ? e.rawMessage : e instanceof Error ? e.message : String(e);
