/**
 * Operands: the arguments a specialised closure takes, done in place where calling a closure would
 * cost more than the work itself (a value known at compile time, a declared object's field, a
 * comprehension variable, a string field against a constant), and the records built from them (a map
 * literal handed to a prepared call as its values). Each does what running its node would, charge for
 * charge.
 */
import { constantEqualityUnits } from "../cost/calls.js";
import { COST } from "../cost/constants.js";
import { CelError, isError, type Result, type Value } from "../runtime/values.js";
import { codePointLength } from "../source.js";
import type { Type } from "../types.js";
import { charge, type Frame, fitsWhole, type Node } from "./frame.js";
import { dynReader, type HostReader } from "./host.js";
import { LaidOut, type Layout } from "./layout.js";

/** A node whose value is known at compile time, with what evaluating it charges. */
export interface Known {
  readonly value: Value;
  readonly cost: number;
}

/**
 * An argument as a specialised closure takes it. Calling a closure costs more than what the commonest
 * ones do, so those are done in place: a value known at compile time (charging what computing it
 * charged, if anything), a field of a declared object variable (`event.type`), a comprehension variable.
 * Anything else runs its node.
 */
export type Operand =
  | { readonly kind: "node"; readonly node: Node }
  | { readonly kind: "constant"; readonly value: Value; readonly cost: number }
  | FieldRead
  | FieldTest
  | { readonly kind: "slot"; readonly slot: number };

/**
 * An operand with every property of every kind, in one order: the closures that read operands then
 * see objects of a single shape, which the engine reads faster than four.
 */
export function shaped(o: Operand): Operand {
  const p: Partial<OperandFields> = o;
  const all = {
    kind: o.kind,
    node: p.node,
    value: p.value ?? null,
    cost: p.cost ?? 0,
    variable: p.variable ?? "",
    field: p.field ?? "",
    read: p.read ?? dynReader,
    verbatim: p.verbatim,
    layout: p.layout,
    index: p.index ?? -1,
    slot: p.slot ?? -1,
    text: p.text ?? "",
    points: p.points ?? 0,
    negate: p.negate ?? false,
    segment: p.segment ?? false,
    fixed: p.fixed ?? 0,
    equal: p.equal ?? 0,
  };
  return all as Operand;
}

/** Every property an operand of some kind has. */
interface OperandFields {
  readonly node: Node;
  readonly value: Value;
  readonly cost: number;
  readonly variable: string;
  readonly field: string;
  readonly read: HostReader;
  readonly verbatim: string | undefined;
  readonly layout: Layout | undefined;
  readonly index: number;
  readonly slot: number;
  readonly text: string;
  readonly points: number;
  readonly negate: boolean;
  readonly segment: boolean;
  readonly fixed: number;
  readonly equal: number;
}

/** What running the operand's node would do, charge for charge. */
export function operand(f: Frame, o: Operand): Result {
  switch (o.kind) {
    case "node":
      return o.node(f);
    case "constant":
      if (o.cost !== 0) charge(f, o.cost);
      return o.value;
    case "field":
      return readField(f, o);
    case "slot":
      return readSlot(f, o.slot);
    case "test":
      return testField(f, o);
  }
}

/** The string constant of an `==` or `!=`, with its code points counted once, at compile time. */
export interface ConstantText {
  readonly text: string;
  readonly points: number;
  /** What computing the constant charged (nothing, for a literal). */
  readonly cost: number;
  readonly negate: boolean;
}

export function constantText(value: string, cost: number, negate: boolean): ConstantText {
  return { text: value, points: codePointLength(value), cost, negate };
}

/**
 * `x == text` (or `!=`), charged as the generic string equality charges it: against a short constant,
 * 1 unit (0 when either string is empty) together with the constant's own cost; against a longer one,
 * the constant's cost and then the shared equality rule.
 */
export function equalsConstant(f: Frame, x: string, c: ConstantText): boolean {
  const text = c.text;
  if (text.length <= SHORT_CONSTANT) {
    charge(f, c.cost + (text.length === 0 || x.length === 0 ? 0 : COST.call));
  } else {
    if (c.cost !== 0) charge(f, c.cost);
    charge(f, constantEqualityUnits(x, text, c.points));
  }
  return c.negate ? x !== text : x === text;
}

/** How to read a declared object variable's field (`event.type`) in place. */
interface FieldAccess {
  readonly variable: string;
  readonly field: string;
  readonly read: HostReader;
  /** The `typeof` of a host value that is its own CEL value (`"string"` for a string field). */
  readonly verbatim: string | undefined;
  /** The object type's layout and the field's slot in it, for an object decoded into it. */
  readonly layout: Layout | undefined;
  readonly index: number;
}

export interface FieldRead extends FieldAccess {
  readonly kind: "field";
}

/** `event.type == "closed"` (or `!=`): a string field against a string constant, read in place. */
export interface FieldTest extends ConstantText, FieldAccess {
  readonly kind: "test";
  /** A constant of whole cost: the read and the comparison charge one sum, `testUnits`. */
  readonly segment: boolean;
  /** The read and the constant's own cost. */
  readonly fixed: number;
  /** The equality's units when the field equals the constant. */
  readonly equal: number;
}

/**
 * The read and the comparison are one straight-line segment: with a constant of whole cost, both
 * charges are made at once when they fit under the limit (`fitsWhole`), else one by one.
 */
export function testField(f: Frame, t: FieldTest): Result {
  const x = fieldValue(f, t);
  if (isError(x)) {
    charge(f, FIELD_UNITS);
    return x;
  }
  const s = x as string;
  if (t.segment) {
    const units = testUnits(t, s);
    if (fitsWhole(f, units)) {
      f.cost += units;
      return t.negate ? s !== t.text : s === t.text;
    }
  }
  charge(f, FIELD_UNITS);
  return equalsConstant(f, s, t);
}

/**
 * What a field test charges in all when its field holds `s`: the read, the constant, and the
 * equality (1 or 0 against a short constant; against a long one, its traversal, known at compile time
 * when the strings are equal).
 */
export function testUnits(t: FieldTest, s: string): number {
  const text = t.text;
  if (text.length <= SHORT_CONSTANT) return t.fixed + (text.length === 0 || s.length === 0 ? 0 : COST.call);
  return t.fixed + (s === text ? t.equal : constantEqualityUnits(s, text, t.points));
}

/** The `FieldTest` that `a == b` or `a != b` is, when it is one. */
export function fieldEquality(
  types: readonly Type[],
  operands: readonly Operand[],
  negate: boolean,
): FieldTest | undefined {
  const [ta, tb] = types;
  const [a, b] = operands;
  if (ta?.kind !== "string" || tb?.kind !== "string" || a?.kind !== "field" || b?.kind !== "constant")
    return undefined;
  if (typeof b.value !== "string") return undefined;
  const { variable, field, read, verbatim, layout, index } = a;
  const text = b.value;
  const points = codePointLength(text);
  return shaped({
    kind: "test",
    variable,
    field,
    read,
    verbatim,
    layout,
    index,
    segment: Number.isInteger(b.cost),
    fixed: FIELD_UNITS + b.cost,
    equal: constantEqualityUnits(text, text, points),
    text,
    points,
    cost: b.cost,
    negate,
  }) as FieldTest;
}

/**
 * `event.type`: a declared object variable's field, read as one step (ident and select, 2 units): from
 * its slot when the object was laid out in the type's layout, else by name. A value that is its own
 * CEL value (a string in a string field) is returned without calling its reader.
 */
export function readField(f: Frame, a: FieldAccess): Result {
  charge(f, FIELD_UNITS);
  return fieldValue(f, a);
}

/** What a field read charges: the variable and the select. */
export const FIELD_UNITS = 2 * COST.selectAndIdent;

/** A field's value, not charged: reading is pure, so a segment may read first and charge after. */
function fieldValue(f: Frame, a: FieldAccess): Result {
  const o = f.vars[a.variable];
  const { read, verbatim } = a;
  let raw: unknown;
  if (o instanceof LaidOut && o.layout === a.layout) raw = o.values[a.index];
  else {
    const host = o instanceof LaidOut ? o.source : o;
    if (host === undefined || host === null) return read(undefined);
    if (typeof host !== "object") return notAnObject(host, a.variable);
    raw = (host as Record<string, unknown>)[a.field];
  }
  // Each case tests a constant `typeof`, which the engine does without computing the type's name.
  switch (verbatim) {
    case "string":
      return typeof raw === "string" ? raw : read(raw);
    case "boolean":
      return typeof raw === "boolean" ? raw : read(raw);
    case "number":
      return typeof raw === "number" ? raw : read(raw);
    default:
      return read(raw);
  }
}

/** A comprehension variable. */
export function readSlot(f: Frame, slot: number): Value {
  charge(f, COST.selectAndIdent);
  return f.slots[slot] as Value;
}

/** A string constant of at most ten UTF-16 units has at most ten code points: equality costs 1 or 0. */
const SHORT_CONSTANT = 10;

/**
 * How to build a map literal's values as an array: the values known at compile time and free to
 * compute are in place from the start (`template`); only the others (`steps`, at `computed`) run.
 */
export interface RecordPlan {
  readonly template: readonly Value[];
  readonly computed: readonly number[];
  readonly steps: readonly Operand[];
  /**
   * Every computed value is a field read, so building the record is one straight-line segment of
   * `units` (the creation and the reads), charged at once when it fits.
   */
  readonly reads: boolean;
  readonly units: number;
  /**
   * Every computed value is a field of one variable that a laid-out object holds as its own CEL value
   * (a string field's string): read straight from the object's slots, with one check of the object.
   */
  readonly laid: LaidReads | undefined;
}

interface LaidReads {
  readonly variable: string;
  readonly layout: Layout;
  readonly slots: readonly number[];
  /** The `typeof` each slot's value must have to be read as it is. */
  readonly types: readonly string[];
}

function laidReads(steps: readonly Operand[]): LaidReads | undefined {
  const first = steps[0];
  if (first?.kind !== "field" || first.layout === undefined) return undefined;
  const { variable, layout } = first;
  const slots: number[] = [];
  const types: string[] = [];
  for (const s of steps) {
    if (s.kind !== "field" || s.variable !== variable || s.layout !== layout || s.index < 0) return undefined;
    if (s.verbatim === undefined) return undefined;
    slots.push(s.index);
    types.push(s.verbatim);
  }
  return { variable, layout, slots, types };
}

export function recordPlan(values: readonly Operand[]): RecordPlan {
  const template: Value[] = [];
  const computed: number[] = [];
  const steps: Operand[] = [];
  values.forEach((v, i) => {
    const free = v.kind === "constant" && v.cost === 0;
    template.push(free ? v.value : null);
    if (!free) {
      computed.push(i);
      steps.push(v);
    }
  });
  const reads = steps.every((s) => s.kind === "field");
  const units = COST.mapCreateBase + FIELD_UNITS * steps.length;
  return { template, computed, steps, reads, units, laid: laidReads(steps) };
}

/** A record's values, charged as the map literal is: its creation, then each value. */
export function buildRecord(f: Frame, plan: RecordPlan): Result {
  if (plan.laid !== undefined && fitsWhole(f, plan.units)) {
    const out = laidRecord(f, plan);
    if (out !== undefined) {
      f.cost += plan.units;
      return out;
    }
  }
  const { template, computed, steps } = plan;
  // Copied by hand: for the few values of a selector this is cheaper than `slice`.
  const out: Value[] = [];
  for (let i = 0; i < template.length; i++) out.push(template[i] as Value);
  if (plan.reads) {
    // Reads are pure: read first, then charge the segment, or its parts up to an error.
    for (let j = 0; j < computed.length; j++) {
      const v = fieldValue(f, steps[j] as FieldRead);
      if (isError(v)) {
        chargeReads(f, j + 1);
        return v;
      }
      out[computed[j] as number] = v;
    }
    if (fitsWhole(f, plan.units)) f.cost += plan.units;
    else chargeReads(f, computed.length);
    return out;
  }
  charge(f, COST.mapCreateBase);
  for (let j = 0; j < computed.length; j++) {
    const v = operand(f, steps[j] as Operand);
    if (isError(v)) return v;
    out[computed[j] as number] = v;
  }
  return out;
}

/**
 * A record of laid reads (`RecordPlan.laid`) from the slots of its laid-out object, not charged; undefined
 * when the object is not laid out or a value is not its own CEL value (to convert, or an error), which
 * the general build handles.
 */
export function laidRecord(f: Frame, plan: RecordPlan): Value[] | undefined {
  const laid = plan.laid;
  if (laid === undefined) return undefined;
  const o = f.vars[laid.variable];
  if (!(o instanceof LaidOut) || o.layout !== laid.layout) return undefined;
  const { template, computed } = plan;
  const out: Value[] = [];
  for (let i = 0; i < template.length; i++) out.push(template[i] as Value);
  const values = o.values;
  const { slots, types } = laid;
  for (let j = 0; j < computed.length; j++) {
    const v = values[slots[j] as number];
    if (typeof v !== types[j]) return undefined;
    out[computed[j] as number] = v as Value;
  }
  return out;
}

/** A record's creation and its first `n` field reads, charged one by one. */
function chargeReads(f: Frame, n: number): void {
  charge(f, COST.mapCreateBase);
  for (let k = 0; k < n; k++) charge(f, FIELD_UNITS);
}

function notAnObject(o: unknown, name: string): CelError {
  return new CelError(`host value of type ${typeof o} is not an object (variable ${name})`);
}
