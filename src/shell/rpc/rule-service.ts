/**
 * RuleService (SPEC-0029 REQ-17): the operator's one view of the rules, which the CLI, doctor and later
 * the TUI read through, never through a private path. The handlers read only what `RuleServiceDeps`
 * gives them: the evaluator's rule set and its state as last committed, the store's fire log, actions,
 * annotations and holds (through `StoreReads`, on the daemon's connection and event loop, so a read sees
 * exactly what has been committed), and the journal metrics. The two control methods call back into the
 * daemon, which does the work between two journal rows.
 *
 * Every failure a caller can act on is a typed `SentinelError` (`../errors.ts`), with one ConnectRPC code and an
 * `ErrorDetail` naming it (`status.ts`), so the CLI maps it to one exit code (docs/cli.md). Anything else is a fault of
 * the daemon, wrapped with the method and what it was asked about.
 */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LoadedRule } from "../../core/compile-rule.js";
import { DAY, HOUR } from "../../core/durations.js";
import { primitiveCallsIn } from "../../core/primitive-calls.js";
import type { Level } from "../../core/rule-file.js";
import {
  type ActiveRule,
  type DisabledRule,
  effectiveLevel,
  type RuleSet,
  type RuleSource,
} from "../../core/rule-set.js";
import { levelDerivation, type RuleState, ruleState, ruleStateCounts } from "../../core/rule-state.js";
import type { CoreState } from "../../core/state.js";
import type { ReloadFailure, ReloadReport } from "../daemon/daemon.js";
import type { EvaluatorView } from "../daemon/evaluator-view.js";
import {
  HoldNotFoundError,
  InvalidArgumentError,
  ReloadFailedError,
  SentinelError,
  UnknownFireError,
  UnknownRuleError,
} from "../errors.js";
import type { FireRow, RuleReads } from "../store/rule-reads.js";
import type { StoreWriteFailure } from "../store/store-write-health.js";
import type { DaemonMetrics } from "../support/metrics.js";
import type { RuleInfoSchema, RuleService } from "./gen/harness/v1/rules_pb.js";
import {
  fireInfo,
  type HoldRecordInit,
  holdInfo,
  holdRecord,
  holdsOn,
  primitivesOf,
  sortedHolds,
} from "./messages.js";
import { checkLength, limitOf, MAX_NODE, sinceOf, withinBudget } from "./requests.js";
import { serve } from "./status.js";

type RuleInfoInit = MessageInitShape<typeof RuleInfoSchema>;

export interface RuleServiceDeps {
  readonly evaluator: EvaluatorView;
  /** The store's fire log, actions, annotations and holds, read on the daemon's connection. */
  readonly reads: RuleReads;
  readonly metrics: Pick<DaemonMetrics, "journalRows" | "journalDropped">;
  /** The daemon's clock, ms. */
  readonly clock: () => number;
  readonly startedAt: number;
  readonly version: string;
  /** Whether the config in force has a `[supervisor] stop` command. */
  readonly supervisorStopConfigured: () => boolean;
  /** `harness rules clear`: releases and commits the holds on `harness` (by `rule`, if given). */
  readonly clear: (harness: string, rule: string | undefined) => void;
  /**
   * `harness reload`; rejects when the config cannot be read (or is gone and `defaults` is false),
   * leaving the set in force.
   */
  readonly reload: (defaults: boolean) => Promise<ReloadReport>;
  /** Why the last reload failed, until one succeeds. */
  readonly lastReloadFailure?: () => ReloadFailure | undefined;
  /** `harness policy sync` after a fast-forward: a reload with the synced clone; rejects an unknown repo. */
  readonly policySynced: (repo: string, commit: string) => Promise<ReloadReport>;
  /** Each declared policy repo's clone as the last load found it (REQ-2's gate), in name order. */
  /** The config keys the last reload found changed that only a restart applies. */
  readonly needsRestart: () => readonly string[];
  /** The store's file, and its last write's failure while no later write succeeded. */
  readonly storeWrite: () => { readonly path: string; readonly failure: StoreWriteFailure | undefined };
  readonly policyClones: () => readonly {
    readonly name: string;
    readonly state: string;
    readonly detail: string;
  }[];
}

/**
 * The unary methods but the proposals'. Backtest and WatchEvents stream, each from its own module, the
 * proposal methods have theirs (`proposal-service.ts`), and the daemon serves them together.
 */
export function ruleService(
  deps: RuleServiceDeps,
): Omit<ServiceImpl<typeof RuleService>, "backtest" | "watchEvents" | "listProposals" | "recordProposal"> {
  const { reads } = deps;
  const rules = () => deps.evaluator.rules;
  const state = () => deps.evaluator.state;

  return {
    checkAdmission: (req) =>
      serve(`CheckAdmission ${req.harness}`, () => {
        checkLength(req.harness, "harness");
        // A supervisor whose harness variable is unset must not be let through.
        if (req.harness === "") throw new InvalidArgumentError("", "harness is required");
        const holds = holdsOn(state(), req.harness);
        const first = holds[0];
        return {
          admitted: first === undefined,
          holds,
          message:
            first === undefined
              ? ""
              : `${req.harness} is held by rule ${first.rule} (fire ${first.fireId}); run \`harness rules clear ${req.harness}\` to release it`,
        };
      }),

    clearHold: (req) =>
      serve(`ClearHold ${req.harness}`, () => {
        checkLength(req.harness, "harness");
        checkLength(req.rule, "rule");
        const rule = req.rule === "" ? undefined : req.rule;
        const released = holdsOn(state(), req.harness).filter((h) => rule === undefined || h.rule === rule);
        if (released.length === 0) throw new HoldNotFoundError(req.harness, rule);
        deps.clear(req.harness, rule);
        return { released };
      }),

    reload: (req) =>
      serve("Reload", async () => {
        let r: ReloadReport;
        try {
          r = await deps.reload(req.defaults);
        } catch (e) {
          throw new ReloadFailedError(e as Error);
        }
        return reloadResponse(r);
      }),

    policySynced: (req) =>
      serve(`PolicySynced ${req.repo}`, async () => {
        if (req.repo === "")
          throw new InvalidArgumentError("", "PolicySynced needs the repo that was synced");
        checkLength(req.repo, "repo");
        checkLength(req.commit, "commit");
        let r: ReloadReport;
        try {
          r = await deps.policySynced(req.repo, req.commit);
        } catch (e) {
          if (e instanceof SentinelError) throw e;
          throw new ReloadFailedError(e as Error);
        }
        return { reload: reloadResponse(r) };
      }),

    listRules: () =>
      serve("ListRules", () => {
        const view = new RuleView(rules(), state(), reads, deps.clock());
        return { rules: view.all() };
      }),

    getRule: (req) =>
      serve(`GetRule ${req.name}`, () => {
        checkLength(req.name, "rule");
        const set = rules();
        const view = new RuleView(set, state(), reads, deps.clock());
        const active = set.rules.find((r) => r.rule.spec.name === req.name);
        if (active !== undefined) {
          const { spec } = active.rule;
          return {
            rule: view.loaded(active),
            when: active.rule.normalizedWhen,
            description: spec.description,
            message: spec.message,
            holds: sortedHolds(Object.values(state().holds).filter((h) => h.rule === req.name)).map(holdInfo),
            primitiveCalls: primitiveCallCount(active.rule),
          };
        }
        const disabled = set.disabled.find((d) => d.name === req.name);
        if (disabled === undefined) throw new UnknownRuleError(req.name);
        return { rule: view.disabled(disabled) };
      }),

    listFires: (req) =>
      serve("ListFires", () => {
        const limit = limitOf(req.limit, "fire");
        checkLength(req.rule, "rule");
        checkLength(req.harness, "harness");
        const sinceMs = sinceOf(req.sinceMs);
        if (req.afterSeq !== undefined) {
          if (req.rule !== "" || req.harness !== "" || sinceMs !== 0)
            throw new InvalidArgumentError("", "ListFires with after_seq takes no rule, harness or since_ms");
          const page = firesForward(reads, sinceOf(req.afterSeq), limit);
          return { ...page, fires: page.fires.map((r) => fireInfo(r, reads.actions(r.fire_id))) };
        }
        const rows = reads.fires(
          {
            ...(req.rule === "" ? {} : { rule: req.rule }),
            ...(req.harness === "" ? {} : { harness: req.harness }),
            sinceMs,
          },
          limit + 1,
        );
        const { kept, truncated } = withinBudget(rows, limit, (r) => [
          r.message,
          r.target_key ?? "",
          r.harness ?? "",
          r.run ?? "",
        ]);
        return { fires: kept.map((r) => fireInfo(r, reads.actions(r.fire_id))), truncated };
      }),

    explainFire: (req) =>
      serve(`ExplainFire ${req.fireId}`, () => {
        checkLength(req.fireId, "fire id");
        const row = reads.fire(req.fireId);
        if (row === undefined) throw new UnknownFireError(req.fireId);
        const journalRow = reads.journalRow(row.seq);
        const loaded = rules().rules.find((r) => r.rule.spec.name === row.rule && r.rule.hash === row.hash);
        return {
          fire: fireInfo(row, reads.actions(row.fire_id)),
          when: loaded?.rule.normalizedWhen ?? "",
          ...(journalRow === undefined
            ? { rowPruned: true }
            : {
                row: {
                  seq: BigInt(journalRow.seq),
                  kind: journalRow.kind,
                  type: journalRow.type,
                  atMs: BigInt(journalRow.at),
                  source: journalRow.source,
                  event: JSON.parse(journalRow.event) as JsonObject,
                },
              }),
          // `now` is the row's admission time (REQ-7), which the fire keeps even when the row is gone.
          nowMs: BigInt(row.at),
          primitives: primitivesOf(row),
          levelDerivation: levelDerivation(
            row.declared_level as Level,
            row.effective_level as Level,
            row.mode === "shadow",
          ),
        };
      }),

    listHolds: (req) =>
      serve("ListHolds", () => {
        const limit = limitOf(req.limit, "hold");
        checkLength(req.harness, "harness");
        const harness = req.harness === "" ? undefined : req.harness;
        const active = sortedHolds(
          Object.values(state().holds).filter((h) => harness === undefined || h.harness === harness),
        ).map(
          (h): HoldRecordInit => ({
            hold: holdInfo(h),
            cooldownMs: BigInt(h.cooldown),
            falseSinceMs: BigInt(h.falseSince ?? 0),
          }),
        );
        if (!req.includeReleased) return { holds: active };
        const released = reads.releasedHolds(harness, limit + 1);
        return {
          holds: [...active, ...released.slice(0, limit).map(holdRecord)],
          truncated: released.length > limit,
        };
      }),

    listAnnotations: (req) =>
      serve(`ListAnnotations ${req.node}`, () => {
        const limit = limitOf(req.limit, "annotation");
        checkLength(req.node, "node", MAX_NODE);
        const rows = reads.annotations(req.node === "" ? undefined : req.node, limit + 1);
        const { kept, truncated } = withinBudget(rows, limit, (a) => [a.message, a.node]);
        return {
          annotations: kept.map((a) => ({
            fireId: a.fire_id,
            node: a.node,
            rule: a.rule,
            message: a.message,
            atMs: BigInt(a.at),
          })),
          truncated,
        };
      }),

    listAnnotatedNodes: (req) =>
      serve("ListAnnotatedNodes", () => {
        const limit = limitOf(req.limit, "node");
        checkLength(req.after, "after", MAX_NODE);
        const rows = reads.annotatedNodes(req.after, limit + 1);
        const { kept, truncated } = withinBudget(rows, limit, (n) => [n.node]);
        return {
          nodes: kept.map((n) => ({ node: n.node, annotations: n.annotations, lastAtMs: BigInt(n.last_at) })),
          truncated,
        };
      }),

    countFires: (req) =>
      serve("CountFires", () => {
        const since = sinceOf(req.sinceMs);
        if (since > 7 * DAY)
          throw new InvalidArgumentError("", `since_ms ${since} is longer than the 7 days CountFires counts`);
        const now = deps.clock();
        const fromMs = Math.floor((now - (since === 0 ? DAY : since)) / HOUR) * HOUR;
        return {
          counts: reads.fireCounts(fromMs).map((c) => ({
            rule: c.rule,
            mode: c.mode,
            hourMs: BigInt(c.hour),
            fires: c.fires,
          })),
          nowMs: BigInt(now),
          fromMs: BigInt(fromMs),
        };
      }),

    getStatus: () =>
      serve("GetStatus", async () => {
        const now = deps.clock();
        const set = rules();
        const current = state();
        const { evaluator } = deps;
        const last = reads.journal.last();
        const costExceeded = set.rules.flatMap((r) => {
          const s = ruleState(r, set, current);
          return s.state === "disabled" ? [{ r, ...s }] : [];
        });
        const counts = ruleStateCounts(set, current);
        const bySource = async (counter: RuleServiceDeps["metrics"]["journalRows"]) =>
          (await counter.get()).values
            .map((v) => ({ source: String(v.labels.source ?? ""), rows: BigInt(v.value) }))
            .sort((a, b) => (a.source < b.source ? -1 : 1));
        return {
          version: deps.version,
          startedAtMs: BigInt(deps.startedAt),
          nowMs: BigInt(now),
          journalRows: BigInt(reads.journalRows()),
          lastSeq: BigInt(last.seq),
          lastAtMs: BigInt(last.at),
          admittedSinceStart: await bySource(deps.metrics.journalRows),
          droppedSinceStart: await bySource(deps.metrics.journalDropped),
          evaluatorCursor: BigInt(evaluator.cursor),
          lagSeconds: evaluator.lagSeconds(now),
          holdsActive: Object.keys(current.holds).length,
          rulesActive: counts.active,
          rulesShadow: counts.shadow,
          disabled: [
            ...set.disabled.map((d) => ({ name: d.name, reason: d.reason, message: d.message })),
            ...costExceeded.map((x) => ({
              name: x.r.rule.spec.name,
              reason: x.disabledReason,
              message: x.disabledMessage,
            })),
          ],
          unknownEnforced: [...set.unknownEnforced],
          enforcedDisabled: [
            ...set.disabled.filter((d) => set.unknownEnforced.includes(d.name)).map((d) => d.name),
            ...costExceeded.filter((x) => x.r.enforced).map((x) => x.r.rule.spec.name),
          ].sort(),
          supervisorStopConfigured: deps.supervisorStopConfigured(),
          undeliveredStops7d: reads.stopsSince("undelivered", now - 7 * DAY),
          unknownStops7d: reads.stopsSince("unknown", now - 7 * DAY),
          policyClones: deps.policyClones().map((c) => ({ name: c.name, state: c.state, detail: c.detail })),
          needsRestart: [...deps.needsRestart()],
          ...reloadFailureFields(deps.lastReloadFailure?.()),
          ...storeWriteStatus(deps.storeWrite()),
        };
      }),
  };
}

/**
 * One forward page of the fire log after `afterSeq`: at most `limit` fires within the response budget,
 * cut at a row boundary so that `next_after_seq` loses no fire; a row with more fires than fit (more
 * than `limit` rules fired on it) is carried whole.
 */
function firesForward(reads: RuleReads, afterSeq: number, limit: number) {
  const rows = reads.firesAfterSeq(afterSeq, limit + 1);
  const budget = withinBudget(rows, limit, (r) => [
    r.message,
    r.target_key ?? "",
    r.harness ?? "",
    r.run ?? "",
  ]);
  let fires: FireRow[] = budget.kept;
  if (budget.truncated) {
    const cut = rows[fires.length] as FireRow;
    const whole = fires.filter((r) => r.seq !== cut.seq);
    fires = whole.length > 0 ? whole : reads.firesAtSeq(cut.seq);
  }
  const last = fires[fires.length - 1];
  const more = budget.truncated && (last === undefined || reads.firesAfterSeq(last.seq, 1).length > 0);
  return { fires, truncated: more, nextAfterSeq: BigInt(last?.seq ?? afterSeq) };
}

const reloadFailureFields = (f: ReloadFailure | undefined) =>
  f === undefined ? {} : { lastReloadError: f.error, lastReloadFailedAtMs: BigInt(f.at) };

const storeWriteStatus = (w: ReturnType<RuleServiceDeps["storeWrite"]>) => ({
  storePath: w.path,
  storeWriteError: w.failure?.error ?? "",
  storeWriteFailingSinceMs: BigInt(w.failure?.sinceMs ?? 0),
  storeWriteFailures: w.failure?.failures ?? 0,
});

const reloadResponse = (r: ReloadReport) => ({
  ...r,
  disabled: [...r.disabled],
  unknownEnforced: [...r.unknownEnforced],
  needsRestart: [...r.needsRestart],
});

const sourceName = (s: RuleSource): string => (s.kind === "starter" ? "starter" : `policy:${s.repo}`);

/** The rule set in force as `ListRules` describes it, at one moment of the daemon's clock. */
class RuleView {
  private readonly since24h: number;
  private readonly since7d: number;

  constructor(
    private readonly set: RuleSet,
    private readonly state: CoreState,
    private readonly reads: RuleReads,
    now: number,
  ) {
    // A fire's seq is at least its row's: the first seq admitted after the bound, or none at all.
    this.since24h = reads.journal.firstAdmittedAfter(now - DAY) ?? Number.MAX_SAFE_INTEGER;
    this.since7d = reads.journal.firstAdmittedAfter(now - 7 * DAY) ?? Number.MAX_SAFE_INTEGER;
  }

  /** Loaded and disabled rules together, in name order. */
  all(): RuleInfoInit[] {
    const out = [
      ...this.set.rules.map((r) => this.loaded(r)),
      ...this.set.disabled.map((d) => this.disabled(d)),
    ];
    return out.sort((a, b) => ((a.name ?? "") < (b.name ?? "") ? -1 : 1));
  }

  loaded(active: ActiveRule): RuleInfoInit {
    const { rule, source, enforced } = active;
    const { spec, hash } = rule;
    const last = this.reads.lastFire(hash);
    const base: RuleInfoInit = {
      name: spec.name,
      source: sourceName(source),
      on: spec.on,
      declaredLevel: spec.level,
      effectiveLevel: effectiveLevel(active),
      enforced,
      hash,
      cooldownMs: BigInt(spec.cooldown),
      target: spec.target,
      estimatedCost: rule.estimatedCost.max,
      fires24h: this.reads.firesOf(hash, this.since24h),
      fires7d: this.reads.firesOf(hash, this.since7d),
      suppressed: BigInt(this.reads.suppressed(hash)),
      lastFireId: last?.fire_id ?? "",
      lastFireAtMs: BigInt(last?.at ?? 0),
      file: spec.file,
    };
    return { ...base, ...ruleStateInfo(ruleState(active, this.set, this.state)) };
  }

  disabled(d: DisabledRule): RuleInfoInit {
    return {
      name: d.name,
      source: sourceName(d.source),
      state: "disabled",
      disabledReason: d.reason,
      disabledMessage: d.message,
      file: d.file,
    };
  }
}

/** Calls of count, distinct and exists in a rule's `when`. */
const primitiveCallCount = (rule: LoadedRule): number =>
  [...primitiveCallsIn(rule.program.checked.expr)].length;

/** A rule's state as RuleInfo carries it: 0 for a time not set. */
function ruleStateInfo(
  s: RuleState,
): Pick<RuleInfoInit, "state" | "disabledReason" | "disabledMessage" | "shadowSinceMs" | "shadowUntilMs"> {
  if (s.state === "disabled")
    return { state: s.state, disabledReason: s.disabledReason, disabledMessage: s.disabledMessage };
  if (s.state === "active") return { state: s.state, shadowSinceMs: BigInt(s.shadowSince ?? 0) };
  return {
    state: s.state,
    shadowSinceMs: BigInt(s.shadowSince ?? 0),
    shadowUntilMs: BigInt(s.shadowUntil ?? 0),
  };
}
