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
 * the one open on that branch, with reviewers and labels; one GitLab is merging (`locked`) is left
 * alone, and a proposal of its name waits. Every state goes through RecordProposal.
 * A dry run does every read (it may fetch) and records, pushes, commits and opens nothing.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import type { ReplayedFire } from "../../core/backtest.js";
import { expressionHash } from "../../core/compile-rule.js";
import { DAY } from "../../core/durations.js";
import { enforceEntries, entriesEnforce } from "../../core/enforce-entry.js";
import { loadRuleFile, loadRuleFileBytes } from "../../core/load-rule.js";
import { enforcement } from "../../core/rule-state.js";
import { loadStarterPack } from "../../core/starter-pack.js";
import type { PolicyRepoConfig } from "../config/global-config.js";
import { formatFinding } from "../lint/findings.js";
import { lintRuleFiles } from "../lint/rule-files.js";
import { readRuleFiles } from "../policy/clone.js";
import type { RuleClient } from "../rpc/client.js";
import { fireOf } from "../rpc/fire-wire.js";
import {
  ErrorDetailSchema,
  ErrorReason,
  type ProposalBacktestSchema,
  type ProposalInfo,
} from "../rpc/gen/harness/v1/rules_pb.js";
import type { Forge, ForgePull } from "./forge.js";
import { BranchDivergedError, type ProposalClone, PushRejectedError } from "./proposal-clone.js";
import { type AgainstLoaded, pullBody, pullTitle, type StarterOverride } from "./pull-body.js";
import { reviewableRuleFile } from "./rule-file-text.js";

export const PROPOSE_BACKTEST_SINCE = 30 * DAY;
const MAX_DETAIL = 2_000;
const FIRST_FIRES = 10;

/** What the pass did with one proposal, or found had become of it. */
export type ProposalAction =
  | "opened"
  | "pushed"
  | "unchanged"
  | "waiting"
  | "suppressed"
  | "duplicate"
  | "invalid"
  | "no_fires"
  | "merged"
  | "closed"
  | "error";

export interface ProposalOutcome {
  readonly id: string;
  readonly name: string;
  readonly action: ProposalAction;
  readonly detail: string;
  readonly pull?: { readonly number: number; readonly url: string } | undefined;
}

export interface PassReport {
  readonly repo: string;
  readonly forge: string;
  /** The bot's login, when `bot_login` gives it or the forge told it; undefined otherwise. */
  readonly login: string | undefined;
  readonly dryRun: boolean;
  readonly outcomes: readonly ProposalOutcome[];
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

/**
 * What a backtest through the daemon gave: the summary RecordProposal keeps, every fire, and, when a
 * loaded rule has the proposal's name, what the proposal adds and removes against it over the same rows.
 */
export type Backtest = (
  file: string,
  text: string,
  sinceMs: number,
) => Promise<{
  counts: { rows: number; fires: number; evalErrors: number; storeErrors: number };
  fires: readonly ReplayedFire[];
  against?: AgainstLoaded;
}>;

export interface PassDeps {
  readonly repo: PolicyRepoConfig;
  readonly shadowPeriodMs: number;
  /** `[memory.rules]`'s lists, for what a starter rule a proposal replaces does now. */
  readonly rules: { readonly enforce: readonly string[]; readonly disable: readonly string[] };
  readonly client: RuleClient;
  readonly forge: Forge;
  /** Opens the proposal clone, git authenticating as `login` (when known) with the repo's token. */
  readonly clone: (login: string | undefined) => Promise<ProposalClone>;
  readonly backtest: Backtest;
  readonly env: NodeJS.ProcessEnv;
  readonly dryRun: boolean;
  /** Propose also what fired 0 times in its stored backtest; otherwise that waits as `no_fires`. */
  readonly includeSilent: boolean;
  readonly now: () => number;
}

export async function proposePass(d: PassDeps): Promise<PassReport> {
  const { repo, forge } = d;
  const login = await botLogin(d);
  if (login !== undefined && repo.reviewers.some((r) => r.toLowerCase() === login.toLowerCase()))
    throw new ReviewerIsAuthorError(repo.name, login);
  const outcomes: ProposalOutcome[] = [];
  const record = recorder(d, outcomes);
  const report = (): PassReport => ({
    repo: repo.name,
    forge: forge.kind,
    login,
    dryRun: d.dryRun,
    outcomes,
  });

  let listing = await listAll(d.client, repo.name);
  const { rejectedHere, readBack } = await readBackPulls(d, listing.proposals, record, outcomes);
  if (!d.dryRun && readBack > 0) listing = await listAll(d.client, repo.name);

  const candidates = listing.proposals.filter((p) => p.state === "stored" || p.state === "waiting");
  if (candidates.length === 0) return report();

  const clone = await d.clone(login);
  const base = await clone.fetch(repo.branch, repo.branchPrefix);
  const pass: Pass = {
    d,
    clone,
    base,
    onDefault: await defaultBranchHashes(clone.dir, base.tip, d.env),
    rejectedHere,
    record,
    outcomes,
    opened: listing.opened7d,
    known: new Set(
      listing.proposals
        .filter((p) => p.policyRepo === repo.name && p.prNumber !== 0n)
        .map((p) => Number(p.prNumber)),
    ),
  };
  for (const p of candidates) {
    try {
      await proposeOne(pass, p);
    } catch (e) {
      outcomes.push({ id: p.id, name: p.name, action: "error", detail: errorText(e) });
    }
  }
  return report();
}

/**
 * The login the token acts as: `bot_login` when set, so no call is made. Otherwise Gitea/Forgejo or
 * GitLab is asked (`GET /user`, which GitLab answers for project and group access tokens' bot users too); GitHub is not, since it refuses that call to a GitHub App installation token
 * (403, "Resource not accessible by integration"), and the pass goes on without the login: only the
 * reviewer-is-author check needs it, and the forge itself refuses that review request.
 */
async function botLogin(d: PassDeps): Promise<string | undefined> {
  if (d.repo.botLogin !== undefined) return d.repo.botLogin;
  return d.forge.kind === "github" ? undefined : await d.forge.login();
}

interface PullLink {
  readonly number: number;
  readonly url: string;
}

/** Keeps an outcome in the report and, unless a dry run, records the proposal's new state. */
type RecordOutcome = (
  p: ProposalInfo,
  o: Omit<ProposalOutcome, "id" | "name">,
  extra?: RecordExtra,
) => Promise<void>;

interface RecordExtra {
  readonly backtest?: BacktestSummary;
}

/** The backtest RecordProposal keeps with an opened or pushed proposal. */
type BacktestSummary = MessageInitShape<typeof ProposalBacktestSchema>;

/** What the candidates of one pass share. */
interface Pass {
  readonly d: PassDeps;
  readonly clone: ProposalClone;
  readonly base: { readonly branch: string; readonly tip: string };
  /** Expression hash → the rule file on the default branch that has it. */
  readonly onDefault: ReadonlyMap<string, string>;
  /** Expression hash → the pull request that closed it unmerged in this pass's read-back. */
  readonly rejectedHere: ReadonlyMap<string, PullLink>;
  readonly record: RecordOutcome;
  readonly outcomes: ProposalOutcome[];
  /** Pull requests opened on the repo in the last 7 days, this pass's included. */
  opened: number;
  /** The pull requests the store has recorded a proposal opened on. */
  readonly known: Set<number>;
}

function recorder(d: PassDeps, outcomes: ProposalOutcome[]): RecordOutcome {
  return async (p, o, extra = {}) => {
    outcomes.push({ id: p.id, name: p.name, ...o });
    if (d.dryRun || o.action === "error" || o.action === "unchanged") return;
    const state = o.action === "pushed" ? "opened" : o.action === "no_fires" ? "waiting" : o.action;
    await d.client.recordProposal({
      id: p.id,
      policyRepo: d.repo.name,
      state,
      prNumber: BigInt(o.pull?.number ?? 0),
      prUrl: o.pull?.url ?? "",
      detail: [...o.detail].slice(0, MAX_DETAIL).join(""),
      ...(extra.backtest === undefined ? {} : { backtest: extra.backtest }),
    });
  };
}

/**
 * Reads back every pull request a proposal has open here. An open one gets what it lacks of the repo's
 * reviewers and labels. A merged one is recorded merged for the proposal whose expression it merged
 * (the hash in the body's marker, which each push rewrites; failing that, the last one pushed), and the
 * store closes the others pushed to it as superseded; a closed one is recorded closed for the last one
 * pushed, which ends all. Returns the expression hashes closed unmerged, and how many were ended.
 */
async function readBackPulls(
  d: PassDeps,
  proposals: readonly ProposalInfo[],
  record: RecordOutcome,
  outcomes: ProposalOutcome[],
): Promise<{ rejectedHere: Map<string, PullLink>; readBack: number }> {
  const rejectedHere = new Map<string, PullLink>();
  const byPull = new Map<number, ProposalInfo[]>();
  for (const p of proposals) {
    if (p.state !== "opened" || p.policyRepo !== d.repo.name || p.prNumber === 0n) continue;
    const number = Number(p.prNumber);
    byPull.set(number, [...(byPull.get(number) ?? []), p]);
  }
  let ended = 0;
  for (const [number, pushed] of byPull) {
    const last = pushed.at(-1) as ProposalInfo;
    const pull = await d.forge.getPull(number);
    const link = { number, url: pull.url };
    if (pull.state === "open") {
      if (pull.merging) {
        // Asking anything of a merge in progress could race it; the next pass reads how it ended.
        outcomes.push({
          id: last.id,
          name: last.name,
          action: "unchanged",
          detail: merging(pull),
          pull: link,
        });
        continue;
      }
      if (d.dryRun) continue;
      try {
        const asked = await ensureReviewersAndLabels(d, pull);
        if (asked.length > 0)
          outcomes.push({
            id: last.id,
            name: last.name,
            action: "unchanged",
            detail: `asked for what #${number} lacked: ${asked.join(", ")}`,
            pull: link,
          });
      } catch (e) {
        outcomes.push({ id: last.id, name: last.name, action: "error", detail: errorText(e), pull: link });
      }
      continue;
    }
    ended++;
    if (pull.merged) {
      const hash = /^<!-- harness-rules name=\S+ hash=([0-9a-f]+) -->/.exec(pull.body)?.[1];
      const merged = pushed.find((p) => p.expressionHash === hash) ?? last;
      await record(merged, { action: "merged", detail: "", pull: link });
    } else {
      const reason = await d.forge.lastReviewComment(number);
      await record(last, { action: "closed", detail: reason, pull: link });
      rejectedHere.set(last.expressionHash, link);
    }
  }
  return { rejectedHere, readBack: ended };
}

/** One stored or waiting proposal: checked, backtested, committed, pushed and opened (or left as it is). */
async function proposeOne(pass: Pass, p: ProposalInfo): Promise<void> {
  const { d, record } = pass;
  const { repo, forge } = d;
  const file = `rules/${p.name}.toml`;
  const refused = refusal(pass, p, file);
  if (refused !== undefined) return record(p, refused);
  const branch = `${repo.branchPrefix}${p.name}`;
  const open = await forge.findOpenPull(branch);
  // A commit pushed to a branch being merged would race the merge: the proposal waits for its end.
  if (open?.merging === true) return record(p, { action: "waiting", detail: merging(open) });
  // A rule that fired 0 times would spend a weekly slot on nothing a reviewer can judge; it waits
  // (an extension of REQ-16, docs/decisions/0008). One already with an open pull request goes on.
  if (open === undefined && !d.includeSilent && p.backtest !== undefined && p.backtest.fires === 0n)
    return record(p, {
      action: "no_fires",
      detail: `no_fires: its backtest fired 0 times over ${p.backtest.rows} rows; \`harness rules propose --include-silent\` proposes it`,
    });
  if (open === undefined && pass.opened >= repo.maxProposalsPerWeek)
    return record(p, {
      action: "waiting",
      detail: `${pass.opened} pull requests were opened on ${repo.name} in the last 7 days; max_proposals_per_week is ${repo.maxProposalsPerWeek}`,
    });
  const bt = await backtestOrInvalid(d, p, file);
  if ("invalid" in bt) return record(p, { action: "invalid", detail: bt.invalid });
  const summary: BacktestSummary = {
    sinceMs: BigInt(d.now() - PROPOSE_BACKTEST_SINCE),
    atMs: BigInt(d.now()),
    rows: BigInt(bt.counts.rows),
    fires: BigInt(bt.counts.fires),
    evalErrors: BigInt(bt.counts.evalErrors),
    storeErrors: BigInt(bt.counts.storeErrors),
    firstFires: bt.fires.slice(0, FIRST_FIRES).map(fireOf),
  };
  const body = proposalBody(d, p, file, bt);
  let start: { start: string; exists: boolean };
  try {
    start = await pass.clone.startOf(branch, pass.base.tip);
  } catch (e) {
    if (!(e instanceof BranchDivergedError)) throw e;
    return record(p, { action: "waiting", detail: e.message });
  }
  if (d.dryRun) {
    pass.outcomes.push({
      id: p.id,
      name: p.name,
      action: open === undefined ? "opened" : "pushed",
      detail:
        open === undefined
          ? `would push ${file} to ${branch} and open a pull request against ${pass.base.branch}`
          : `would push ${file} to ${branch}, the head of open pull request #${open.number}`,
      ...(open === undefined ? {} : { pull: { number: open.number, url: open.url } }),
    });
    return;
  }
  const commit = await pass.clone.commit(
    start.start,
    p.name,
    reviewableRuleFile(p.fileText),
    `${pullTitle(p.name)} (${p.id})`,
  );
  if (commit !== undefined) {
    try {
      await pass.clone.push(commit, branch);
    } catch (e) {
      // Diverged or refused by the forge (a hook, a protected branch): it waits, with the forge's reason.
      if (!(e instanceof BranchDivergedError) && !(e instanceof PushRejectedError)) throw e;
      return record(p, { action: "waiting", detail: e.message });
    }
  }
  if (open !== undefined && !pass.known.has(open.number)) {
    // A pull request this repo's store never recorded (a pass that failed after opening it) is adopted:
    // it was opened by a pass, so it counts against the cap like one opened now.
    pass.known.add(open.number);
    pass.opened++;
  }
  const pull = await openOrRefresh(pass, p, branch, open, body);
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
}

/** Why the proposal is not proposed before the forge is asked: it fails lint, was rejected, or is on the default branch. */
function refusal(
  pass: Pass,
  p: ProposalInfo,
  file: string,
): Omit<ProposalOutcome, "id" | "name"> | undefined {
  const lint = lintRuleFiles([{ file, bytes: new TextEncoder().encode(p.fileText) }]);
  const errors = lint.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return { action: "invalid", detail: errors.map(formatFinding).join("\n") };
  const rejected = p.rejected ?? pass.rejectedHere.get(p.expressionHash);
  if (rejected !== undefined) {
    const number = "prNumber" in rejected ? Number(rejected.prNumber) : rejected.number;
    const url = "prUrl" in rejected ? rejected.prUrl : rejected.url;
    return {
      action: "suppressed",
      detail: `its expression hash was rejected on ${pass.d.repo.name} by pull request #${number} (${url})`,
      pull: { number, url },
    };
  }
  const same = pass.onDefault.get(p.expressionHash);
  if (same !== undefined)
    return { action: "duplicate", detail: `${same} on ${pass.base.branch} has the same expression hash` };
  return undefined;
}

/** The pull request's body: the proposal, its rule's fields and the backtest. */
function proposalBody(d: PassDeps, p: ProposalInfo, file: string, bt: Awaited<ReturnType<Backtest>>): string {
  const loaded = loadRuleFile(file, p.fileText);
  const spec = loaded.ok ? loaded.rule.spec : undefined;
  return pullBody({
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
    public: d.repo.public,
    publicUnset: d.repo.publicUnset === true,
    shadowPeriodMs: d.shadowPeriodMs,
    starter: starterOf(d, p.name),
    against: bt.against,
  });
}

/** The embedded starter rule named `name`, as the daemon loads it with the config's enforce and disable. */
function starterOf(d: PassDeps, name: string): StarterOverride | undefined {
  for (const l of loadStarterPack()) {
    if (!l.ok || l.rule.spec.name !== name) continue;
    const { level, on } = l.rule.spec;
    return {
      level,
      on,
      enforcement: enforcement(level, entriesEnforce(enforceEntries(d.rules.enforce).get(name), l.rule.hash)),
      disabled: d.rules.disable.includes(name),
    };
  }
  return undefined;
}

/** The open pull request's body refreshed, or a new one opened; either way with the repo's reviewers and labels. */
async function openOrRefresh(
  pass: Pass,
  p: ProposalInfo,
  branch: string,
  open: ForgePull | undefined,
  body: string,
): Promise<ForgePull> {
  const { forge } = pass.d;
  if (open !== undefined) {
    await forge.updateBody(open.number, body);
    await ensureReviewersAndLabels(pass.d, open);
    return open;
  }
  const pull = await forge.openPull({ title: pullTitle(p.name), head: branch, base: pass.base.branch, body });
  pass.opened++;
  await ensureReviewersAndLabels(pass.d, pull);
  return pull;
}

/**
 * Asks for what the pull request lacks of the repo's reviewers and labels, read back from the forge
 * (requested, or already reviewed), so a pass that failed half way is completed by the next one.
 * Returns what it asked for.
 */
export async function ensureReviewersAndLabels(d: PassDeps, pull: ForgePull): Promise<string[]> {
  const { forge, repo } = d;
  const has = new Set(pull.requested.map((r) => r.toLowerCase()));
  const missingReviewers = repo.reviewers.filter((r) => {
    const team = r.indexOf("/");
    return !has.has(team < 0 ? r.toLowerCase() : `team:${r.slice(team + 1).toLowerCase()}`);
  });
  if (missingReviewers.some((r) => !r.includes("/"))) {
    for (const login of await forge.reviewedBy(pull.number)) has.add(login.toLowerCase());
  }
  const reviewers = missingReviewers.filter((r) => r.includes("/") || !has.has(r.toLowerCase()));
  const labels = repo.labels.filter((l) => !pull.labels.includes(l));
  if (reviewers.length > 0) await forge.requestReviewers(pull.number, reviewers);
  if (labels.length > 0) await forge.addLabels(pull.number, labels);
  return [...reviewers, ...labels.map((l) => `label ${l}`)];
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

const merging = (pull: ForgePull): string =>
  `merging: #${pull.number} on ${pull.head} is being merged; a later pass reads how the merge ended`;

const errorText = (e: unknown): string =>
  e instanceof ConnectError ? e.rawMessage : e instanceof Error ? e.message : String(e);
