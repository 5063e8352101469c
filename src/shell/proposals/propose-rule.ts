/**
 * propose_rule (SPEC-0029 REQ-15): a rule miner's proposal, checked and stored by the daemon in its own
 * process. It is NOT an RPC ("No RPC SHALL … store a proposal"): the MCP gateway (`../gateway/`, in the
 * daemon's process) registers the tool only for runs of a harness listed in `[memory] rule_miners`
 * and calls `ProposalIntake.propose` with the caller's run as its token identified it. The intake checks
 * that again, so a gateway that registered the tool for the wrong caller still stores nothing.
 *
 * At store time it refuses, each with its named error: a level other than annotate or notify
 * (invalid_level); anything REQ-3's schema, REQ-4's compilation or REQ-6's cost estimate refuses (the
 * core's loader, on the rule file rendered from the fields); an evidence id that resolves to nothing
 * (`evidence.ts`); an 11th proposal from one run; a 51st stored, unproposed proposal
 * (proposal_backlog_full). A valid call is backtested over 30 days in a backtest worker (one of the
 * daemon's two slots: a busy daemon answers backtest_busy), stored untrusted with the caller's run, and
 * answered with its id, content hash, backtest summary and advice (`advice.ts`: never a refusal),
 * wrapped as untrusted memory data. A dry run makes every check and the backtest and answers the same,
 * storing nothing. Nothing here loads a rule: a stored proposal is never evaluated live.
 */
import { stringify as toToml } from "smol-toml";
import { isUnicodeText } from "../../core/admission.js";
import type { ReplayedFire } from "../../core/backtest.js";
import { expressionHash } from "../../core/compile-rule.js";
import { DAY } from "../../core/durations.js";
import { rfc3339Seconds } from "../../core/instants.js";
import { MAX_PATH } from "../../core/kinds.js";
import { loadRuleFile } from "../../core/load-rule.js";
import { ruleFileText } from "../../core/rule-file-bytes.js";
import { backtestRequest, DEFAULT_BACKTEST_SINCE } from "../backtest/backtest-request.js";
import type { BacktestRunner } from "../backtest/backtest-runner.js";
import type { BacktestRequest } from "../backtest/replay.js";
import type { EvaluatorView } from "../daemon/evaluator-view.js";
import {
  InvalidArgumentError,
  InvalidProposalLevelError,
  NotRuleMinerError,
  ProposalBacklogFullError,
  ProposalRunLimitError,
  RuleRefusedError,
  SentinelError,
  UnknownEvidenceError,
} from "../errors.js";
import { FIRST_FIRES, type ProposalBacktest } from "../store/proposal-store.js";
import type { StoreDoor } from "../store/store-door.js";
import type { Log } from "../support/log.js";
import type { DaemonMetrics } from "../support/metrics.js";
import { Turns } from "../support/turns.js";
import { type ProposalAdvice, proposalAdvice } from "./advice.js";
import { EvidenceResolver } from "./evidence.js";
import { type MemoryData, wrapMemoryData } from "./memory-data.js";

/** REQ-15's limits. */
export const MAX_RATIONALE_CHARS = 2_000;
export const MAX_EVIDENCE = 50;
export const MAX_PROPOSALS_PER_RUN = 10;
export const MAX_BACKLOG = 50;
/** The longest evidence id: a node id is a prefix and a percent-encoded path (as RuleService bounds it). */
export const MAX_EVIDENCE_ID = 12 * MAX_PATH + 64;
const RUN_ID = /^([^\s:#]+)#([^\s:#]+)$/;

/** REQ-3's keys, as the gateway tool declares them; `cooldown` may be left out (1h). */
export interface ProposedRule {
  readonly name: string;
  readonly description: string;
  readonly on: string;
  readonly when: string;
  readonly level: string;
  readonly cooldown?: string;
  readonly target: string;
  readonly message: string;
}

export interface ProposeRuleCall {
  /** The calling run, `<harness>#<run id>`, as the gateway identified it (SPEC-0005 "Caller Identity"). */
  readonly callerRun: string;
  readonly rule: ProposedRule;
  readonly rationale: string;
  /** 1 to 50 ids of runs, journal rows, fires or graph nodes (`evidence.ts`). */
  readonly evidence: readonly string[];
  readonly dryRun: boolean;
}

export interface ProposeRuleResult {
  /** `p-<n>`; absent for a dry run, which stores nothing. */
  readonly id?: string;
  readonly dry_run: boolean;
  readonly name: string;
  readonly content_hash: string;
  readonly expression_hash: string;
  /** What a reviewer would ask first; empty when nothing stands out (`advice.ts`). */
  readonly advice: readonly ProposalAdvice[];
  readonly backtest: {
    readonly since: string;
    readonly rows: number;
    readonly fires: number;
    readonly eval_errors: number;
    readonly store_errors: number;
    readonly first_fires: readonly {
      readonly seq: number;
      readonly at: string;
      readonly kind: string;
      readonly type: string;
      readonly target: { readonly kind: string; readonly key: string } | null;
      readonly level: string;
      readonly message: string;
    }[];
  };
}

export interface ProposalIntakeDeps {
  /** Where proposals are stored, through the daemon's store door. */
  readonly proposals: StoreDoor["proposals"];
  /** What evidence ids may name, through the same door. */
  readonly evidence: StoreDoor["evidence"];
  readonly evaluator: EvaluatorView;
  readonly backtests: Pick<BacktestRunner, "run">;
  readonly metrics: Pick<DaemonMetrics, "proposals">;
  readonly log: Log;
  readonly clock: () => number;
  /** `[memory] rule_miners` and `journal_retention` as last loaded. */
  readonly ruleMiners: () => readonly string[];
  readonly retentionMs: () => number;
}

/** Where a miner's proposal comes in (propose_rule): checked, backtested and stored, in the daemon's process. */
export class ProposalIntake {
  private readonly store: StoreDoor["proposals"];
  private readonly evidence: EvidenceResolver;
  /**
   * The last capacity check and the insert, one proposal at a time: with awaits between them, two
   * proposals checked side by side would both find room for one (an 11th from a run, a 51st stored).
   */
  private readonly stores = new Turns();

  constructor(private readonly deps: ProposalIntakeDeps) {
    this.store = deps.proposals;
    this.evidence = new EvidenceResolver(deps.evidence);
  }

  /**
   * Checks, backtests and (unless a dry run) stores a proposal. Rejects with a `SentinelError`
   * naming what refused it, so the gateway can hand the miner the reason.
   */
  async propose(call: ProposeRuleCall): Promise<MemoryData<ProposeRuleResult>> {
    const name = typeof call.rule.name === "string" ? call.rule.name.slice(0, 64) : "";
    try {
      const result = await this.proposeChecked(call);
      this.deps.metrics.proposals.inc({ result: call.dryRun ? "dry_run" : "stored" });
      this.deps.log.info(
        {
          proposal: result.id,
          rule: result.name,
          hash: result.content_hash,
          run: call.callerRun,
          dry_run: call.dryRun,
        },
        call.dryRun ? "rule proposal dry run" : "rule proposal stored",
      );
      return wrapMemoryData("propose_rule", result);
    } catch (e) {
      this.deps.metrics.proposals.inc({ result: "rejected" });
      if (e instanceof SentinelError) {
        this.deps.log.info(
          { rule: name, run: call.callerRun, reason: e.name, subject: e.subject },
          "rule proposal refused",
        );
        throw e;
      }
      throw new Error(`propose_rule ${name} (run ${call.callerRun}): ${(e as Error).message}`, { cause: e });
    }
  }

  private async proposeChecked(call: ProposeRuleCall): Promise<ProposeRuleResult> {
    this.checkCaller(call.callerRun);
    const { rule } = call;
    if (rule.level !== "annotate" && rule.level !== "notify")
      throw new InvalidProposalLevelError(String(rule.name), String(rule.level));
    const level = rule.level;
    checkRationale(rule.name, call.rationale);
    const evidence = checkEvidence(rule.name, call.evidence);
    const file = fileFor(rule.name);
    for (const [key, value] of Object.entries(rule))
      if (typeof value === "string" && !isUnicodeText(value))
        throw new RuleRefusedError({
          reason: "schema",
          file,
          key,
          message: `${key} is not well-formed Unicode text`,
        });
    let text: string;
    try {
      text = renderRuleFile(rule);
    } catch (e) {
      // A value no TOML can hold (null, say): the schema refuses it as it would in a file.
      throw new RuleRefusedError({
        reason: "schema",
        file,
        message: `invalid value: ${(e as Error).message}`,
      });
    }
    const bytes = ruleFileText(file, new TextEncoder().encode(text));
    if (!bytes.ok) throw new RuleRefusedError(bytes.problem);
    const load = loadRuleFile(file, text);
    if (!load.ok) throw new RuleRefusedError(load.problem);
    const loaded = load.rule;
    const unresolved = await this.evidence.firstUnresolved(evidence);
    if (unresolved !== undefined) throw new UnknownEvidenceError(unresolved);
    await this.checkCapacity(call.callerRun, loaded.spec.name);
    const backtest = await this.backtest(file, text);
    const proposal = {
      name: loaded.spec.name,
      contentHash: loaded.hash,
      expressionHash: expressionHash(loaded.spec.on, loaded.normalizedWhen),
    };
    // Before the dry-run branch: a dry run is told the same.
    const advice = proposalAdvice(
      { ...proposal, on: loaded.spec.on, normalizedWhen: loaded.normalizedWhen, backtest },
      this.deps.evaluator.rules,
    );
    const id = call.dryRun
      ? undefined
      : await this.stores.run(async () => {
          // Checked again after the backtest's wait: another call may have filled the run's quota since.
          await this.checkCapacity(call.callerRun, loaded.spec.name);
          return this.store.insert({
            ...proposal,
            fileText: text,
            on: loaded.spec.on,
            level,
            rationale: call.rationale,
            evidence,
            run: call.callerRun,
            backtest,
            at: this.deps.clock(),
          });
        });
    return {
      ...(id === undefined ? {} : { id }),
      dry_run: call.dryRun,
      name: proposal.name,
      content_hash: proposal.contentHash,
      expression_hash: proposal.expressionHash,
      advice,
      backtest: summaryJson(backtest),
    };
  }

  private checkCaller(run: string): void {
    const m = typeof run === "string" ? RUN_ID.exec(run) : null;
    if (m === null)
      throw new InvalidArgumentError("", "propose_rule needs the caller's run, <harness>#<run id>");
    if (!this.deps.ruleMiners().includes(m[1] as string)) throw new NotRuleMinerError(run);
  }

  private async checkCapacity(run: string, name: string): Promise<void> {
    if ((await this.store.countByRun(run)) >= MAX_PROPOSALS_PER_RUN)
      throw new ProposalRunLimitError(run, MAX_PROPOSALS_PER_RUN);
    const backlog = await this.store.backlog();
    if (backlog >= MAX_BACKLOG) throw new ProposalBacklogFullError(name, backlog);
  }

  /** REQ-15's 30-day backtest, in a backtest worker: the counts and the first fires. */
  private async backtest(file: string, text: string): Promise<ProposalBacktest> {
    const now = this.deps.clock();
    const sinceMs = Math.min(DEFAULT_BACKTEST_SINCE, this.deps.retentionMs() - 7 * DAY);
    const { evaluator } = this.deps;
    const request: BacktestRequest = backtestRequest({
      file,
      text,
      sinceMs,
      nowMs: now,
      ruleSet: evaluator.rules,
      shadows: evaluator.state.shadows,
    });
    const firstFires: ReplayedFire[] = [];
    const parts = this.deps.backtests.run(request, new AbortController().signal);
    for await (const m of parts)
      switch (m.part) {
        case "start":
          break;
        case "fires":
          firstFires.push(...m.fires.slice(0, FIRST_FIRES - firstFires.length));
          break;
        case "summary":
          return {
            sinceMs,
            atMs: now,
            rows: m.counts.rows,
            fires: m.counts.fires,
            evalErrors: m.counts.evalErrors,
            storeErrors: m.counts.storeErrors,
            firstFires,
          };
        case "rule_error":
          throw new RuleRefusedError(m.problem);
        case "error":
          throw new Error(`the backtest failed: ${m.message}`);
      }
    throw new Error("the backtest ended without a summary");
  }
}

/** `rules/<name>.toml`, or a placeholder file when the name is not one (the schema check then says so). */
function fileFor(name: unknown): string {
  return typeof name === "string" && /^[a-z][a-z0-9-]{0,62}$/.test(name)
    ? `rules/${name}.toml`
    : "rules/proposal.toml";
}

/**
 * The rule file for the proposed fields, in REQ-3's key order: what the loader checks, what the store
 * keeps and what `harness rules propose` will write as rules/<name>.toml. Only REQ-3's keys are
 * written, whatever else the caller passed.
 */
export function renderRuleFile(rule: ProposedRule): string {
  const doc: Record<string, unknown> = {};
  for (const key of ["name", "description", "on", "when", "level", "cooldown", "target", "message"] as const)
    if (rule[key] !== undefined) doc[key] = rule[key];
  return `${toToml(doc)}\n`;
}

function checkRationale(name: string, rationale: unknown): void {
  if (typeof rationale !== "string" || rationale.trim() === "")
    throw new InvalidArgumentError(name, "a proposal needs a rationale");
  if (!isUnicodeText(rationale))
    throw new InvalidArgumentError(name, "the rationale is not well-formed Unicode text");
  const chars = [...rationale].length;
  if (chars > MAX_RATIONALE_CHARS)
    throw new InvalidArgumentError(
      name,
      `the rationale is ${chars} characters long; at most ${MAX_RATIONALE_CHARS} are kept`,
    );
}

/** The evidence ids, each once, in the order given: 1 to 50 of them. */
function checkEvidence(name: string, evidence: unknown): string[] {
  if (!Array.isArray(evidence)) throw new InvalidArgumentError(name, "evidence must be a list of ids");
  const ids = [...new Set(evidence as unknown[])];
  if (ids.length < 1 || ids.length > MAX_EVIDENCE)
    throw new InvalidArgumentError(
      name,
      `a proposal needs 1 to ${MAX_EVIDENCE} evidence ids, not ${ids.length}`,
    );
  for (const id of ids)
    if (typeof id !== "string" || id.length > MAX_EVIDENCE_ID || !isUnicodeText(id))
      throw new UnknownEvidenceError(typeof id === "string" ? id : (JSON.stringify(id) ?? String(id)));
  return ids as string[];
}

function summaryJson(b: ProposalBacktest): ProposeRuleResult["backtest"] {
  return {
    since: rfc3339Seconds(b.atMs - b.sinceMs),
    rows: b.rows,
    fires: b.fires,
    eval_errors: b.evalErrors,
    store_errors: b.storeErrors,
    first_fires: b.firstFires.map((f) => ({
      seq: f.seq,
      at: rfc3339Seconds(f.at),
      kind: f.kind,
      type: f.type,
      target: f.target === undefined ? null : { kind: f.target.kind, key: f.target.key },
      level: f.level,
      message: f.message,
    })),
  };
}
