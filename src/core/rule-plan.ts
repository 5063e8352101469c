/**
 * What `evaluate` works out once per rule set rather than once per row: the rules of each event kind
 * (in name order), the rules by hash for a tick's holds, each rule's cooldown keys, and the shadow
 * records in which every rule's shadow has already completed, so a row skips the per-rule lookups.
 *
 * A plan is made with its rule set (`ruleSetOf`) and is a cache only: every answer it gives is the one
 * a fresh lookup gives, so `evaluate` stays a function of its arguments.
 */
import { type Expr, Op } from "../cel/index.js";
import type { ActiveRule } from "./active-rule.js";
import type { LoadedRule } from "./compile-rule.js";
import { WINDOW } from "./environments.js";
import { EVENT_FIELDS, EVENT_KINDS, EVENT_LAYOUTS, type EventKind, MAX_IDENT } from "./kinds.js";
import type { RuleEvaluation } from "./outcome.js";
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

/**
 * An operand of a `when`'s top-level `&&` chain that tests one event field against a constant:
 * `event.f == "…"` (either side) on a string field, `event.f` or `!event.f` on a bool field. Where the
 * field holds a value of its type other than `want`, that operand is false, and so is the whole chain:
 * CEL's `&&` is false as soon as any operand is, whatever the others give (errors included).
 */
interface FieldGuard {
  readonly field: string;
  /** The field's slot in its kind's layout (`EVENT_LAYOUTS`), where an unset field holds its zero value. */
  readonly slot: number;
  readonly want: string | boolean;
}

/** Whether a field's value `v` makes its guard's operand false: a value of the guard's type, not `want`. */
const refutes = (v: unknown, want: string | boolean): boolean => v !== want && typeof v === typeof want;

/** The operands of the top-level `&&` chain, in source order (the parser nests them either way). */
function conjuncts(e: Expr, out: Expr[] = []): Expr[] {
  if (e.kind === "call" && e.fn === Op.logicalAnd && e.target === undefined) {
    for (const a of e.args) conjuncts(a, out);
  } else out.push(e);
  return out;
}

function fieldGuard(x: Expr, on: EventKind): FieldGuard | undefined {
  /** The field `y` reads from the event, when it is a plain read of a field of this type. */
  const fieldOf = (y: Expr, type: "string" | "bool"): { field: string; slot: number } | undefined => {
    if (y.kind !== "select" || y.testOnly || y.operand.kind !== "ident" || y.operand.name !== "event")
      return undefined;
    if (EVENT_FIELDS[on][y.field]?.type.kind !== type) return undefined;
    const slot = EVENT_LAYOUTS[on].index.get(y.field);
    return slot === undefined ? undefined : { field: y.field, slot };
  };
  if (x.kind === "select") {
    const f = fieldOf(x, "bool");
    return f === undefined ? undefined : { ...f, want: true };
  }
  if (x.kind !== "call" || x.target !== undefined) return undefined;
  if (x.fn === Op.logicalNot) {
    const f = fieldOf(x.args[0] as Expr, "bool");
    return f === undefined ? undefined : { ...f, want: false };
  }
  if (x.fn !== Op.equals) return undefined;
  const [a, b] = x.args as [Expr, Expr];
  const text = (y: Expr) => (y.kind === "literal" && y.value.type === "string" ? y.value.value : undefined);
  const fa = fieldOf(a, "string");
  const fb = fieldOf(b, "string");
  const want = fa !== undefined ? text(b) : fb !== undefined ? text(a) : undefined;
  const f = fa ?? fb;
  return f === undefined || want === undefined ? undefined : { ...f, want };
}

/**
 * A rule's field guards, and the least limit under which they may answer for the program: its
 * estimate's upper bound. An evaluation of an admitted row (every row `evaluate` meets was admitted
 * against the kinds' bounds, which the estimate assumes) charges at most that, so under such a limit
 * it cannot stop with `cost_exceeded` before its false operand decides it.
 */
function fieldGuards(rule: LoadedRule): { readonly guards: readonly FieldGuard[]; readonly limit: number } {
  const guards: FieldGuard[] = [];
  for (const x of conjuncts(rule.program.checked.expr)) {
    const g = fieldGuard(x, rule.spec.on);
    if (g !== undefined) guards.push(g);
  }
  return { guards, limit: Number(rule.program.estimateCost().max) };
}

/** One rule as the loop meets it. */
export class PlannedRule {
  /** Cooldown key by target key: a key built once is a string the state's lookups already know. */
  private readonly keys = new Map<string, string>();
  /** The record of the last match a cooldown suppressed, reused while the same entry suppresses. */
  private suppressed: { readonly entry: CooldownEntry; readonly evaluation: RuleEvaluation } | undefined;

  private readonly guard: { readonly type: string; readonly cost: number } | undefined;
  private readonly fieldGuards: readonly FieldGuard[];
  /** The least limit under which `fieldGuards` answer for the program. */
  private readonly fieldGuardLimit: number;

  constructor(readonly active: ActiveRule) {
    this.guard = typeGuard(active.rule);
    const { guards, limit } = fieldGuards(active.rule);
    this.fieldGuards = guards;
    this.fieldGuardLimit = limit;
  }

  /**
   * Whether the rule is false on a row of this event type without running it: its guard turns the type
   * away and the limit covers what the guarded evaluation would have charged.
   */
  turnsAway(type: unknown, limit: number): boolean {
    const { guard } = this;
    return guard !== undefined && typeof type === "string" && type !== guard.type && limit >= guard.cost;
  }

  /** The one event type `turnsAway` lets through under this limit, or `undefined` when it lets any. */
  typeLetThrough(limit: number): string | undefined {
    const { guard } = this;
    return guard !== undefined && limit >= guard.cost ? guard.type : undefined;
  }

  /**
   * Whether the rule is false on an event laid out in its kind's layout without running it: some
   * field guard finds a value of the field's type other than the one it needs, under a limit the
   * program's whole evaluation fits in. A value of another type (a hand-built row) decides nothing.
   */
  falseOn(values: readonly unknown[], limit: number): boolean {
    const guards = this.fieldGuards;
    if (guards.length === 0 || limit < this.fieldGuardLimit) return false;
    for (let i = 0; i < guards.length; i++) {
      const { slot, want } = guards[i] as FieldGuard;
      if (refutes(values[slot], want)) return true;
    }
    return false;
  }

  /** The fields its field guards test. */
  get guardedFields(): readonly string[] {
    return this.fieldGuards.map((g) => g.field);
  }

  /**
   * `falseOn` for a row whose fields are known only in part (a backtest reads some from the journal's
   * columns before it decodes an event): `known` gives a field's value, or `undefined` where it is not
   * known, which decides nothing.
   */
  falseOnKnown(known: (field: string) => string | boolean | undefined, limit: number): boolean {
    if (limit < this.fieldGuardLimit) return false;
    // `undefined` is of no guard's type, so a field not known refutes nothing.
    return this.fieldGuards.some(({ field, want }) => refutes(known(field), want));
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

  constructor(readonly rules: readonly ActiveRule[]) {
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
