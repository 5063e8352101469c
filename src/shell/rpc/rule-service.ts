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
import { children, type Expr } from "../../cel/index.js";
import type { LoadedRule } from "../../core/compile-rule.js";
import { DAY } from "../../core/durations.js";
import { PRIMITIVE_NAMES } from "../../core/environments.js";
import { MAX_IDENT, MAX_PATH } from "../../core/kinds.js";
import type { Level } from "../../core/rule-file.js";
import {
  type ActiveRule,
  type DisabledRule,
  effectiveLevel,
  needsEnforce,
  type RuleSet,
  type RuleSource,
  skipsShadow,
} from "../../core/rule-set.js";
import type { CoreState, Hold } from "../../core/state.js";
import {
  HoldNotFoundError,
  InvalidArgumentError,
  ReloadFailedError,
  SentinelError,
  UnknownFireError,
  UnknownRuleError,
} from "../errors.js";
import type { StoredPrimitive } from "../store/decision-store.js";
import { JournalTable } from "../store/journal-table.js";
import type { Db } from "../store/open-store.js";
import type { DaemonMetrics } from "../support/metrics.js";
import type {
  ActionOutcomeSchema,
  FireInfoSchema,
  HoldInfoSchema,
  HoldRecordSchema,
  PrimitiveCallInfoSchema,
  RuleInfoSchema,
  RuleService,
  SelectorTermSchema,
} from "./gen/harness/v1/rules_pb.js";
import { serve } from "./status.js";

/** Rows a list returns unless the caller asks for fewer, and the most it may ask for. */
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;

/**
 * The most a list response may carry, estimated from its variable-size fields: under the clients' 4 MiB
 * `readMaxBytes`, since a thousand fires whose messages repeat long paths would not fit in it.
 */
const RESPONSE_BUDGET_BYTES = 3 * 1024 * 1024;
/** A generous allowance for one list entry's fixed-size fields and framing. */
const ENTRY_OVERHEAD_BYTES = 512;

/** The longest prefix of `items` within the response budget, and whether anything was left out. */
export function withinBudget<T>(items: readonly T[], limit: number, texts: (t: T) => readonly string[]) {
  let bytes = 0;
  let n = 0;
  for (const item of items.slice(0, limit)) {
    bytes += ENTRY_OVERHEAD_BYTES;
    for (const t of texts(item)) bytes += Buffer.byteLength(t, "utf8");
    if (bytes > RESPONSE_BUDGET_BYTES) break;
    n++;
  }
  return { kept: items.slice(0, n), truncated: items.length > n };
}

/** What a reload reports (`harness reload`). */
export interface ReloadReport {
  readonly loaded: number;
  readonly disabled: readonly { readonly name: string; readonly reason: string; readonly message: string }[];
  readonly unknownEnforced: readonly string[];
  readonly released: number;
}

/** The evaluator as the service reads it: the set in force, and the state as last committed. */
export interface EvaluatorView {
  readonly rules: RuleSet;
  readonly state: CoreState;
  /** The seq of the last row evaluated and committed. */
  readonly cursor: number;
  /** The `at` of that row; 0 before any. */
  readonly lastEvaluatedAt: number;
  /** REQ-20's lag at `now`, seconds (the gauge's value). */
  lagSeconds(now: number): number;
}

export interface RuleServiceDeps {
  readonly evaluator: EvaluatorView;
  /** The daemon's store connection; the service only reads through it. */
  readonly db: Db;
  readonly metrics: Pick<DaemonMetrics, "journalRows" | "journalDropped">;
  /** The daemon's clock, ms. */
  readonly clock: () => number;
  readonly startedAt: number;
  readonly version: string;
  /** Whether the daemon runs with a `[supervisor] stop` command. */
  readonly supervisorStopConfigured: boolean;
  /** `harness rules clear`: releases and commits; returns the holds released. */
  readonly clear: (harness: string, rule: string | undefined) => readonly HoldInit[];
  /** `harness reload`; rejects when the config cannot be read, leaving the set in force. */
  readonly reload: () => Promise<ReloadReport>;
  /** `harness policy sync` after a fast-forward: a reload with the synced clone; rejects an unknown repo. */
  readonly policySynced: (repo: string, commit: string) => Promise<ReloadReport>;
  /** Each declared policy repo's clone as the last load found it (REQ-2's gate), in name order. */
  readonly policyClones: () => readonly {
    readonly name: string;
    readonly state: string;
    readonly detail: string;
  }[];
}

type HoldInit = MessageInitShape<typeof HoldInfoSchema>;
type RuleInfoInit = MessageInitShape<typeof RuleInfoSchema>;
type FireInit = MessageInitShape<typeof FireInfoSchema>;
type HoldRecordInit = MessageInitShape<typeof HoldRecordSchema>;

export function limitOf(requested: number, what: string): number {
  if (requested === 0) return DEFAULT_LIST_LIMIT;
  if (requested > MAX_LIST_LIMIT)
    throw new InvalidArgumentError(
      what,
      `limit ${requested} is over the most a ${what} list returns (${MAX_LIST_LIMIT})`,
    );
  return requested;
}

/**
 * The longest name a request may carry. No identifier the journal admits is longer than MAX_IDENT
 * (`kinds.ts`), and rule names and fire ids are shorter still, so a longer one can only be refused. A
 * node id is a prefix and a percent-encoded path of up to MAX_PATH code points, 12 characters each at
 * most.
 */
const MAX_NAME = MAX_IDENT;
const MAX_NODE = 12 * MAX_PATH + 64;

/** Refuses a name longer than any the daemon holds, echoing only its start. */
export function checkLength(value: string, field: string, max = MAX_NAME): void {
  if (value.length <= max) return;
  const start = `${value.slice(0, 32)}…`;
  throw new InvalidArgumentError(
    start,
    `${field} ${JSON.stringify(start)} is ${value.length} characters long; none the daemon holds is longer than ${max}`,
  );
}

/** A request's lower time bound, ms: not negative, and within what the journal's times can be. */
function sinceOf(sinceMs: bigint): number {
  if (sinceMs < 0n) throw new InvalidArgumentError("", `since_ms ${sinceMs} is negative`);
  if (sinceMs > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidArgumentError("", `since_ms ${sinceMs} is past any time the journal can hold`);
  return Number(sinceMs);
}

/** The holds in force on a harness, oldest first. */
export function holdsOn(state: CoreState, harness: string): HoldInit[] {
  return sortedHolds(Object.values(state.holds).filter((h) => h.harness === harness)).map(holdInfo);
}

const sortedHolds = (holds: readonly Hold[]): Hold[] =>
  [...holds].sort(
    (a, b) =>
      a.since - b.since || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : a.harness < b.harness ? -1 : 1),
  );

const holdInfo = (h: Hold): HoldInit => ({
  harness: h.harness,
  rule: h.rule,
  hash: h.hash,
  fireId: h.fireId,
  sinceMs: BigInt(h.since),
});

/**
 * The unary methods but the proposals'. Backtest and WatchEvents stream, each from its own module, the
 * proposal methods have theirs (`proposal-service.ts`), and the daemon serves them together.
 */
export function ruleService(
  deps: RuleServiceDeps,
): Omit<ServiceImpl<typeof RuleService>, "backtest" | "watchEvents" | "listProposals" | "recordProposal"> {
  const reads = new StoreReads(deps.db);
  const rules = () => deps.evaluator.rules;
  const state = () => deps.evaluator.state;

  return {
    checkAdmission: (req) =>
      serve(`CheckAdmission ${req.harness}`, () => {
        checkLength(req.harness, "harness");
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
        const released = deps.clear(req.harness, rule);
        if (released.length === 0) throw new HoldNotFoundError(req.harness, rule);
        return { released: [...released] };
      }),

    reload: () =>
      serve("Reload", async () => {
        let r: ReloadReport;
        try {
          r = await deps.reload();
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
            primitiveCalls: primitiveCalls(active.rule),
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

    getStatus: () =>
      serve("GetStatus", async () => {
        const now = deps.clock();
        const set = rules();
        const current = state();
        const { evaluator } = deps;
        const last = reads.journal.last();
        const states = set.rules.map((r) => ({ r, ...ruleState(r, set, current) }));
        const costExceeded = states.filter((x) => x.state === "disabled");
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
              reason: x.disabledReason ?? "",
              message: x.disabledMessage ?? "",
            })),
          ],
          unknownEnforced: [...set.unknownEnforced],
          enforcedDisabled: [
            ...set.disabled.filter((d) => set.unknownEnforced.includes(d.name)).map((d) => d.name),
            ...costExceeded.filter((x) => x.r.enforced).map((x) => x.r.rule.spec.name),
          ].sort(),
          supervisorStopConfigured: deps.supervisorStopConfigured,
          undeliveredStops7d: reads.undeliveredStopsSince(now - 7 * DAY),
          policyClones: deps.policyClones().map((c) => ({ name: c.name, state: c.state, detail: c.detail })),
        };
      }),
  };
}

const reloadResponse = (r: ReloadReport) => ({
  ...r,
  disabled: [...r.disabled],
  unknownEnforced: [...r.unknownEnforced],
});

const sourceName = (s: RuleSource): string => (s.kind === "starter" ? "starter" : `policy:${s.repo}`);

/** The rule set in force as `ListRules` describes it, at one moment of the daemon's clock. */
class RuleView {
  private readonly since24h: number;
  private readonly since7d: number;

  constructor(
    private readonly set: RuleSet,
    private readonly state: CoreState,
    private readonly reads: StoreReads,
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
    return { ...base, ...ruleState(active, this.set, this.state) };
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

type RuleState = Pick<
  RuleInfoInit,
  "state" | "disabledReason" | "disabledMessage" | "shadowSinceMs" | "shadowUntilMs"
>;

/** A loaded rule's state, as the evaluator treats it on the next row. */
export function ruleState(active: ActiveRule, set: RuleSet, state: CoreState): RuleState {
  const { hash } = active.rule;
  if (state.costExceeded[hash] === true)
    return {
      state: "disabled",
      disabledReason: "cost_exceeded",
      disabledMessage: "an evaluation overran the cost limit; disabled until the next load",
    };
  // REQ-9: a starter rule, or a zero shadow period, is active from the next row whatever is recorded;
  // otherwise a hash is in shadow until its record says it completed.
  const shadow = state.shadows[hash];
  if (skipsShadow(active, set.shadowPeriod) || shadow?.completed === true)
    return { state: "active", shadowSinceMs: BigInt(shadow?.since ?? 0) };
  return {
    state: "shadow",
    shadowSinceMs: BigInt(shadow?.since ?? 0),
    shadowUntilMs: BigInt(shadow === undefined ? 0 : shadow.since + set.shadowPeriod),
  };
}

/** How many loaded rules are in each state (GetStatus and the daemon's rules gauge count alike). */
export function ruleStateCounts(
  set: RuleSet,
  state: CoreState,
): Readonly<Record<"active" | "shadow" | "disabled", number>> {
  const counts = { active: 0, shadow: 0, disabled: 0 };
  for (const r of set.rules) counts[ruleState(r, set, state).state as keyof typeof counts]++;
  return counts;
}

/** REQ-18's derivation of the effective level, as the fire recorded it. */
function levelDerivation(declared: Level, effective: Level, shadow: boolean): string {
  const head = `declared ${declared}, effective ${effective}`;
  const why =
    declared !== effective
      ? "not in [memory.rules] enforce"
      : needsEnforce(declared)
        ? "listed in [memory.rules] enforce"
        : "annotate and notify need no enforce";
  return `${head}: ${why}${shadow ? "; in shadow, so no level acted" : ""}`;
}

/** Calls of count, distinct and exists in a rule's `when`. */
function primitiveCalls(rule: LoadedRule): number {
  let n = 0;
  const visit = (e: Expr): void => {
    if (e.kind === "call" && e.target === undefined && (PRIMITIVE_NAMES as readonly string[]).includes(e.fn))
      n++;
    for (const c of children(e)) visit(c);
  };
  visit(rule.program.checked.expr);
  return n;
}

function primitivesOf(row: FireRow): MessageInitShape<typeof PrimitiveCallInfoSchema>[] {
  let calls: StoredPrimitive[];
  try {
    calls = JSON.parse(row.primitives) as StoredPrimitive[];
  } catch (e) {
    throw new Error(
      `fire ${row.fire_id} (rule ${row.rule}, seq ${row.seq}): its primitives column is not JSON`,
      {
        cause: e,
      },
    );
  }
  return calls.map((c) => ({
    fn: c.fn,
    field: c.field ?? "",
    selector: [
      { field: "kind", value: { case: "text", value: c.selector.kind } },
      ...Object.entries(c.selector.fields).map(
        ([field, v]): MessageInitShape<typeof SelectorTermSchema> => ({
          field,
          value: typeof v === "boolean" ? { case: "flag", value: v } : { case: "text", value: v },
        }),
      ),
    ],
    withinMs: BigInt(c.withinMs),
    result:
      typeof c.result === "boolean"
        ? { case: "truth", value: c.result }
        : { case: "number", value: c.result },
  }));
}

function fireInfo(r: FireRow, actions: readonly ActionRow[]): FireInit {
  return {
    fireId: r.fire_id,
    rule: r.rule,
    hash: r.hash,
    seq: BigInt(r.seq),
    atMs: BigInt(r.at),
    kind: r.kind,
    type: r.type,
    targetKind: r.target_kind ?? "",
    targetKey: r.target_key ?? "",
    harness: r.harness ?? "",
    run: r.run ?? "",
    declaredLevel: r.declared_level,
    effectiveLevel: r.effective_level,
    mode: r.mode,
    action: r.action,
    message: r.message,
    actions: actions.map(
      (a): MessageInitShape<typeof ActionOutcomeSchema> => ({
        action: a.action,
        state: a.state,
        detail: a.detail ?? "",
        updatedAtMs: BigInt(a.updated_at),
      }),
    ),
  };
}

interface FireRow {
  fire_id: string;
  seq: number;
  at: number;
  rule: string;
  hash: string;
  kind: string;
  type: string;
  target_kind: string | null;
  target_key: string | null;
  harness: string | null;
  run: string | null;
  declared_level: string;
  effective_level: string;
  mode: string;
  action: string;
  message: string;
  primitives: string;
}

interface ActionRow {
  action: string;
  state: string;
  detail: string | null;
  updated_at: number;
}

interface HoldRow {
  harness: string;
  rule: string;
  hash: string;
  fire_id: string;
  since: number;
  cooldown: number;
  false_since: number | null;
  /** Null while the hold is in force. */
  released_at: number | null;
  release_cause: string | null;
}

/** A stored hold as ListHolds returns a released one. */
function holdRecord(r: HoldRow): HoldRecordInit {
  return {
    hold: { harness: r.harness, rule: r.rule, hash: r.hash, fireId: r.fire_id, sinceMs: BigInt(r.since) },
    cooldownMs: BigInt(r.cooldown),
    falseSinceMs: BigInt(r.false_since ?? 0),
    releasedAtMs: BigInt(r.released_at ?? 0),
    releaseCause: r.release_cause ?? "",
  };
}

/**
 * The fire and hold records a commit made durable, read back by fire id in the shapes ListFires and
 * ListHolds return them, for WatchEvents to send as they commit.
 */
export interface CommittedRecords {
  fire(fireId: string): FireInit | undefined;
  /** The hold a fire placed, in force or (after its release) released. */
  hold(fireId: string): HoldRecordInit | undefined;
}

export function committedRecords(db: Db): CommittedRecords {
  const reads = new StoreReads(db);
  return {
    fire: (fireId) => {
      const row = reads.fire(fireId);
      return row === undefined ? undefined : fireInfo(row, reads.actions(fireId));
    },
    hold: (fireId) => {
      const row = reads.holdOf(fireId);
      return row === undefined ? undefined : holdRecord(row);
    },
  };
}

interface AnnotationRow {
  fire_id: string;
  node: string;
  rule: string;
  message: string;
  at: number;
}

const HOLD_COLUMNS = "harness, rule, hash, fire_id, since, cooldown, false_since, released_at, release_cause";

const FIRE_COLUMNS =
  "fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run, declared_level, effective_level, mode, action, message, primitives";

/**
 * The service's reads of the store, each bounded and index-served where the schema has an index: fires
 * by hash or harness and seq, actions by fire, annotations by node, the journal by seq and at. Fires by
 * rule name and released holds scan their (small) tables.
 */
class StoreReads {
  private readonly stmts;
  /** The journal's own reads: its last row, and the first row after a time (which bounds every fire
   * after that time by seq, the admission clock never going back, for the (hash, seq) index). */
  readonly journal: JournalTable;

  constructor(private readonly db: Db) {
    this.journal = new JournalTable(db);
    this.stmts = {
      firesOf: db.prepare("SELECT COUNT(*) AS n FROM rule_fires WHERE hash = ? AND seq >= ?"),
      lastFire: db.prepare(
        "SELECT fire_id, at FROM rule_fires WHERE hash = ? ORDER BY seq DESC, rowid DESC LIMIT 1",
      ),
      suppressed: db.prepare("SELECT COALESCE(SUM(count), 0) AS n FROM rule_suppressed WHERE hash = ?"),
      fire: db.prepare(`SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE fire_id = ?`),
      holdOf: db.prepare(`SELECT ${HOLD_COLUMNS} FROM rule_holds WHERE fire_id = ? ORDER BY id DESC LIMIT 1`),
      actions: db.prepare(
        "SELECT action, state, detail, updated_at FROM rule_actions WHERE fire_id = ? ORDER BY action",
      ),
      journalRow: db.prepare("SELECT seq, kind, type, at, source, event FROM rule_journal WHERE seq = ?"),
      journalRows: db.prepare("SELECT COUNT(*) AS n FROM rule_journal"),
      undeliveredStops: db.prepare(
        "SELECT COUNT(*) AS n FROM rule_actions WHERE state = 'undelivered' AND action = 'stop' AND updated_at > ?",
      ),
    };
  }

  firesOf(hash: string, fromSeq: number): number {
    return (this.stmts.firesOf.get(hash, fromSeq) as { n: number }).n;
  }

  lastFire(hash: string): { fire_id: string; at: number } | undefined {
    return this.stmts.lastFire.get(hash) as { fire_id: string; at: number } | undefined;
  }

  suppressed(hash: string): number {
    return (this.stmts.suppressed.get(hash) as { n: number }).n;
  }

  fire(fireId: string): FireRow | undefined {
    return this.stmts.fire.get(fireId) as FireRow | undefined;
  }

  actions(fireId: string): ActionRow[] {
    return this.stmts.actions.all(fireId) as ActionRow[];
  }

  fires(
    filter: { readonly rule?: string; readonly harness?: string; readonly sinceMs: number },
    limit: number,
  ): FireRow[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.rule !== undefined) {
      where.push("rule = ?");
      params.push(filter.rule);
    }
    if (filter.harness !== undefined) {
      where.push("harness = ?");
      params.push(filter.harness);
    }
    if (filter.sinceMs > 0) {
      where.push("at >= ?");
      params.push(filter.sinceMs);
    }
    const sql = `SELECT ${FIRE_COLUMNS} FROM rule_fires ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`} ORDER BY seq DESC, rowid DESC LIMIT ?`;
    return this.db.prepare(sql).all(...params, limit) as FireRow[];
  }

  journalRow(
    seq: number,
  ): { seq: number; kind: string; type: string; at: number; source: string; event: string } | undefined {
    return this.stmts.journalRow.get(seq) as ReturnType<StoreReads["journalRow"]>;
  }

  journalRows(): number {
    return (this.stmts.journalRows.get() as { n: number }).n;
  }

  releasedHolds(harness: string | undefined, limit: number): HoldRow[] {
    const cols = HOLD_COLUMNS;
    return (
      harness === undefined
        ? this.db
            .prepare(
              `SELECT ${cols} FROM rule_holds WHERE released_at IS NOT NULL ORDER BY released_at DESC, id DESC LIMIT ?`,
            )
            .all(limit)
        : this.db
            .prepare(
              `SELECT ${cols} FROM rule_holds WHERE released_at IS NOT NULL AND harness = ? ORDER BY released_at DESC, id DESC LIMIT ?`,
            )
            .all(harness, limit)
    ) as HoldRow[];
  }

  /** The hold a fire placed; a scan, as holds are few (only enforced hold and stop rules place them). */
  holdOf(fireId: string): HoldRow | undefined {
    return this.stmts.holdOf.get(fireId) as HoldRow | undefined;
  }

  annotations(node: string | undefined, limit: number): AnnotationRow[] {
    const cols = "fire_id, node, rule, message, at";
    return (
      node === undefined
        ? this.db
            .prepare(`SELECT ${cols} FROM rule_annotations ORDER BY at DESC, rowid DESC LIMIT ?`)
            .all(limit)
        : this.db
            .prepare(
              `SELECT ${cols} FROM rule_annotations WHERE node = ? ORDER BY at DESC, rowid DESC LIMIT ?`,
            )
            .all(node, limit)
    ) as AnnotationRow[];
  }

  undeliveredStopsSince(at: number): number {
    return (this.stmts.undeliveredStops.get(at) as { n: number }).n;
  }
}
