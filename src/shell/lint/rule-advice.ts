/**
 * Advice beyond the loader's verdict, as warnings a rule's author wants before merging: a comparison
 * of an enumerated field with a value its kind never carries, a `when` that can never be true or is
 * always true, and a primitive selector no row of its kind can match. Each is certain, never a guess:
 * a `when` is judged by evaluating its constant parts with the real CEL evaluator and combining them
 * through `&&`, `||`, `!` and `?:` by CEL's own rules (errors included), and nothing else is assumed.
 */
import { type CheckedAst, compileAst, type Expr, Op, standardEnv, type Value } from "../../cel/index.js";
import { COST_LIMIT, type LoadedRule } from "../../core/compile-rule.js";
import { EVENT_FIELDS, EVENT_TYPE_NAMES, type EventKind, isEventKind } from "../../core/kinds.js";
import { isPrimitiveCall, primitiveArgs, subexpressions } from "../../core/primitive-calls.js";
import { outsideEnumeration } from "./enumerations.js";
import type { LintReason } from "./findings.js";

export interface Advice {
  /** UTF-16 offset into `when`. */
  readonly offset: number;
  readonly reason: Extract<
    LintReason,
    "unknown_value" | "never_true" | "always_true" | "selector_never_matches"
  >;
  readonly message: string;
}

export function adviseRule(rule: LoadedRule): Advice[] {
  const checked = rule.program.checked;
  const kind = rule.spec.on;
  const at = (e: Expr) => checked.offsets.get(e.id) ?? 0;
  const advice: Advice[] = [];
  for (const e of subexpressions(checked.expr)) {
    if (e.kind !== "call") continue;
    if ((e.fn === Op.equals || e.fn === Op.notEquals) && e.target === undefined) {
      const compared = enumeratedComparison(checked, kind, e.args);
      if (compared !== undefined) {
        const verdict = e.fn === Op.equals ? "can never be true" : "is always true";
        advice.push({
          offset: at(compared.literal),
          reason: "unknown_value",
          message: `this comparison ${verdict}: ${compared.why}`,
        });
      }
    }
    if (isPrimitiveCall(e)) {
      const sel = primitiveArgs(e).selector;
      const why = sel === undefined ? undefined : selectorNeverMatches(kind, sel);
      if (why !== undefined && sel !== undefined)
        advice.push({
          offset: at(sel),
          reason: "selector_never_matches",
          message: `this ${e.fn} selector matches no row: ${why}`,
        });
    }
  }
  const outcomes = foldOutcomes(checked, checked.expr);
  if (!outcomes.has("true"))
    advice.push({
      offset: 0,
      reason: "never_true",
      message: "when can never be true: the rule never fires",
    });
  else if (outcomes.size === 1)
    advice.push({
      offset: 0,
      reason: "always_true",
      message: `when is always true: the rule fires on every ${kind} row its cooldown allows`,
    });
  return advice;
}

/**
 * `event.<field>` of the rule's own event, or undefined: by the operand's checked type, so a
 * comprehension variable that happens to be called `event` is not taken for it.
 */
function eventField(checked: CheckedAst, kind: EventKind, e: Expr): string | undefined {
  if (e.kind !== "select" || e.testOnly) return undefined;
  const t = checked.types.get(e.operand.id);
  return t?.kind === "object" && t.name === EVENT_TYPE_NAMES[kind] ? e.field : undefined;
}

const stringLiteral = (e: Expr): string | undefined =>
  e.kind === "literal" && e.value.type === "string" ? e.value.value : undefined;

/** `event.<field> == "<literal>"` (either way round) with a literal outside the field's enumeration. */
function enumeratedComparison(
  checked: CheckedAst,
  kind: EventKind,
  args: readonly Expr[],
): { readonly literal: Expr; readonly why: string } | undefined {
  const [a, b] = args;
  if (a === undefined || b === undefined) return undefined;
  for (const [x, y] of [
    [a, b],
    [b, a],
  ] as const) {
    const field = eventField(checked, kind, x);
    const value = stringLiteral(y);
    const why =
      field === undefined || value === undefined ? undefined : outsideEnumeration(kind, field, value);
    if (why !== undefined) return { literal: y, why };
  }
  return undefined;
}

/**
 * Why no row can match a selector map literal, or undefined. A row reads an unset field as `""` (or
 * `false` for is_error), and admission refuses a field its kind does not have, so a non-zero literal
 * for such a field, a value outside a field's enumeration, or a `kind` that is no event kind, cannot
 * match.
 */
function selectorNeverMatches(ruleKind: EventKind, sel: Expr): string | undefined {
  if (sel.kind !== "map") return undefined;
  let kind: string = ruleKind;
  const literals: [string, string | boolean][] = [];
  for (const { key, value } of sel.entries) {
    const name = stringLiteral(key);
    if (name === undefined) continue;
    const v =
      value.kind === "literal" && (value.value.type === "string" || value.value.type === "bool")
        ? value.value.value
        : undefined;
    if (typeof v === "string" && name === "kind") kind = v;
    else if (v !== undefined) literals.push([name, v]);
  }
  if (!isEventKind(kind)) return `kind ${JSON.stringify(kind)} is not an event kind`;
  const fields = EVENT_FIELDS[kind];
  for (const [name, v] of literals) {
    const carried = Object.hasOwn(fields, name) || (name === "path" && Object.hasOwn(fields, "paths"));
    if (!carried && v !== "" && v !== false) return `a ${kind} row has no ${name}`;
    if (typeof v === "string") {
      const why = outsideEnumeration(kind, name, v);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

type Outcome = "true" | "false" | "error";
const ANY: ReadonlySet<Outcome> = new Set(["true", "false", "error"]);

/** CEL's `&&` on definite operands: false wins, then error, then true. */
const and = (x: Outcome, y: Outcome): Outcome =>
  x === "false" || y === "false" ? "false" : x === "error" || y === "error" ? "error" : "true";
const or = (x: Outcome, y: Outcome): Outcome =>
  x === "true" || y === "true" ? "true" : x === "error" || y === "error" ? "error" : "false";
const not = (x: Outcome): Outcome => (x === "true" ? "false" : x === "false" ? "true" : "error");

function lift(xs: ReadonlySet<Outcome>, ys: ReadonlySet<Outcome>, f: (x: Outcome, y: Outcome) => Outcome) {
  const out = new Set<Outcome>();
  for (const x of xs) for (const y of ys) out.add(f(x, y));
  return out;
}

/** The outcomes a boolean subexpression can have over every possible row: a sound over-approximation. */
function foldOutcomes(checked: CheckedAst, e: Expr): ReadonlySet<Outcome> {
  if (e.kind === "call" && e.target === undefined) {
    const sub = (i: number) => foldOutcomes(checked, e.args[i] as Expr);
    if (e.fn === Op.logicalAnd && e.args.length === 2) return lift(sub(0), sub(1), and);
    if (e.fn === Op.logicalOr && e.args.length === 2) return lift(sub(0), sub(1), or);
    if (e.fn === Op.logicalNot && e.args.length === 1) return new Set([...sub(0)].map(not));
    if (e.fn === Op.conditional && e.args.length === 3) {
      const cond = sub(0);
      const out = new Set<Outcome>();
      if (cond.has("true")) for (const o of sub(1)) out.add(o);
      if (cond.has("false")) for (const o of sub(2)) out.add(o);
      if (cond.has("error")) out.add("error");
      return out;
    }
  }
  return isConstant(e) ? constantOutcome(checked, e) : ANY;
}

/** No variable, comprehension or primitive: the same value on every row. */
function isConstant(e: Expr): boolean {
  for (const x of subexpressions(e)) {
    if (x.kind === "ident" || x.kind === "comprehension") return false;
    if (isPrimitiveCall(x)) return false;
  }
  return true;
}

/** Evaluates a constant subexpression with the standard environment, as the rule would on any row. */
function constantOutcome(checked: CheckedAst, e: Expr): ReadonlySet<Outcome> {
  const compiled = compileAst({ ...checked, expr: e }, standardEnv);
  if (!compiled.ok) return ANY;
  const r = compiled.program.evaluate({}, COST_LIMIT);
  if (r.kind === "error") return new Set(["error"]);
  if (r.kind !== "value" || typeof (r.value as Value) !== "boolean") return ANY;
  return new Set([r.value ? "true" : "false"]);
}
