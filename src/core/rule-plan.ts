/**
 * What `evaluate` works out once per rule set rather than once per row: the rules of each event kind
 * (in name order), the rules by hash for a tick's holds, each rule's cooldown keys, and the shadow
 * records in which every rule's shadow has already completed, so a row skips the per-rule lookups.
 *
 * A plan is kept beside the rule set's `rules` array (a spread copy of a set shares it) and is a cache
 * only: every answer it gives is the one a fresh lookup gives, so `evaluate` stays a function of its
 * arguments.
 */
import { type Expr, Op } from "../cel/index.js";
import type { LoadedRule } from "./compile-rule.js";
import { WINDOW } from "./environments.js";
import { EVENT_KINDS, type EventKind, MAX_IDENT } from "./kinds.js";
import type { RuleEvaluation } from "./outcome.js";
import type { ActiveRule, RuleSet } from "./rule-set.js";
import { type CooldownEntry, type CoreState, cooldownKey } from "./state.js";

/** Past this many target keys a rule's key cache starts again, so a month of runs cannot grow it. */
const MAX_CACHED_KEYS = 4_096;

/**
 * The event type a `when` tests before anything else: the leftmost operand of its top-level `&&` chain
 * is `event.type == "…"`. CEL's `&&` is false as soon as an operand is, whatever the others would give,
 * so on a row of another type the rule is false, having charged only that first test.
 */
function leadingType(e: Expr): string | undefined {
  let lead = e;
  while (lead.kind === "call" && lead.fn === Op.logicalAnd && lead.target === undefined)
    lead = lead.args[0] as Expr;
  if (lead.kind !== "call" || lead.fn !== Op.equals || lead.target !== undefined) return undefined;
  const [a, b] = lead.args as [Expr, Expr];
  const isType = (x: Expr) =>
    x.kind === "select" &&
    !x.testOnly &&
    x.field === "type" &&
    x.operand.kind === "ident" &&
    x.operand.name === "event";
  const text = (x: Expr) => (x.kind === "literal" && x.value.type === "string" ? x.value.value : undefined);
  return isType(a) ? text(b) : isType(b) ? text(a) : undefined;
}

/** A reader no guarded evaluation may reach: the guard is false before any primitive is called. */
const NO_READS = {
  count(): number {
    throw new Error("a type guard read the window");
  },
  distinct(): number {
    throw new Error("a type guard read the window");
  },
  exists(): boolean {
    throw new Error("a type guard read the window");
  },
};

/**
 * A rule's type guard, if it has one, with what its program charges on a row the guard turns away:
 * measured by running the program on an event of another type as long as a row's type may be (the
 * charge of a string test grows with the length, never with the content). A limit below that charge
 * would have stopped the real evaluation with `cost_exceeded`, so the guard is then not used.
 */
function typeGuard(rule: LoadedRule): { readonly type: string; readonly cost: number } | undefined {
  const type = leadingType(rule.program.checked.expr);
  if (type === undefined) return undefined;
  const other = (type.startsWith("a") ? "b" : "a").repeat(MAX_IDENT);
  const r = rule.program.evaluate({ event: { type: other }, now: 0, [WINDOW]: NO_READS });
  return r.kind === "value" && r.value === false ? { type, cost: r.cost } : undefined;
}

/** One rule as the loop meets it. */
export class PlannedRule {
  /** Cooldown key by target key: a key built once is a string the state's lookups already know. */
  private readonly keys = new Map<string, string>();
  /** The record of the last match a cooldown suppressed, reused while the same entry suppresses. */
  private suppressed: { readonly entry: CooldownEntry; readonly evaluation: RuleEvaluation } | undefined;

  private readonly guard: { readonly type: string; readonly cost: number } | undefined;

  constructor(readonly active: ActiveRule) {
    this.guard = typeGuard(active.rule);
  }

  /**
   * Whether the rule is false on a row of this event type without running it: its guard turns the type
   * away and the limit covers what the guarded evaluation would have charged.
   */
  turnsAway(type: unknown, limit: number): boolean {
    const { guard } = this;
    return guard !== undefined && typeof type === "string" && type !== guard.type && limit >= guard.cost;
  }

  get rule(): LoadedRule {
    return this.active.rule;
  }

  cooldownKey(target: string): string {
    let key = this.keys.get(target);
    if (key === undefined) {
      if (this.keys.size >= MAX_CACHED_KEYS) this.keys.clear();
      key = cooldownKey(this.active.rule.hash, target);
      this.keys.set(target, key);
    }
    return key;
  }

  /** `{rule, hash, result: "suppressed", detail}` for a match inside `entry`'s cooldown. */
  suppressedBy(entry: CooldownEntry): RuleEvaluation {
    if (this.suppressed?.entry !== entry) {
      const { name } = this.active.rule.spec;
      const evaluation = {
        rule: name,
        hash: this.active.rule.hash,
        result: "suppressed",
        detail: entry.fireId,
      };
      this.suppressed = { entry, evaluation: evaluation as RuleEvaluation };
    }
    return this.suppressed.evaluation;
  }
}

export class RulePlan {
  readonly all: readonly PlannedRule[];
  readonly byKind: Readonly<Record<EventKind, readonly PlannedRule[]>>;
  readonly byHash: ReadonlyMap<string, LoadedRule>;
  /**
   * Shadow records (a state's `shadows`, by identity) in which every rule of the set has a completed
   * shadow. Ops only ever add a record or complete one, never undo either, so a record set once found
   * settled stays settled for as long as it is advanced by ops.
   */
  private readonly settled = new WeakSet<CoreState["shadows"]>();

  constructor(rules: readonly ActiveRule[]) {
    this.all = rules.map((r) => new PlannedRule(r));
    const byKind = {} as Record<EventKind, PlannedRule[]>;
    for (const kind of EVENT_KINDS) byKind[kind] = this.all.filter((p) => p.rule.spec.on === kind);
    this.byKind = byKind;
    this.byHash = new Map(rules.map((r) => [r.rule.hash, r.rule]));
  }

  shadowsSettled(shadows: CoreState["shadows"]): boolean {
    return this.settled.has(shadows);
  }

  /** Records that every rule's shadow in `shadows` has completed (the caller has just looked). */
  settle(shadows: CoreState["shadows"]): void {
    this.settled.add(shadows);
  }
}

const plans = new WeakMap<readonly ActiveRule[], RulePlan>();

export function planOf(ruleSet: RuleSet): RulePlan {
  let plan = plans.get(ruleSet.rules);
  if (plan === undefined) {
    plan = new RulePlan(ruleSet.rules);
    plans.set(ruleSet.rules, plan);
  }
  return plan;
}
