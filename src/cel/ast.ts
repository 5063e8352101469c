/**
 * The CEL abstract syntax tree.
 *
 * A discriminated union on `kind`; every node has a numeric `id`, unique within its `Ast`. Nothing else
 * rides on the nodes: source offsets, and (in later phases) types and resolved references, live in side
 * tables keyed by id, so no phase rewrites the tree another produced. Macros are already expanded into
 * `comprehension` nodes (and `has()` into a test-only `select`); the call each came from is kept in
 * `Ast.macroCalls`, so the printer can give back the form the author wrote.
 */
import type { Source } from "./source.js";

export type Expr =
  | LiteralExpr
  | IdentExpr
  | SelectExpr
  | CallExpr
  | ListExpr
  | MapExpr
  | StructExpr
  | ComprehensionExpr;

export type ExprKind = Expr["kind"];

export type Literal =
  | { readonly type: "null" }
  | { readonly type: "bool"; readonly value: boolean }
  /** A signed 64-bit integer, held exactly. */
  | { readonly type: "int"; readonly value: bigint }
  /** An unsigned 64-bit integer, held exactly. */
  | { readonly type: "uint"; readonly value: bigint }
  | { readonly type: "double"; readonly value: number }
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "bytes"; readonly value: Uint8Array };

export interface LiteralExpr {
  readonly kind: "literal";
  readonly id: number;
  readonly value: Literal;
}

/** A name; a leading-dot name (`.a`) keeps its dot in `name`. */
export interface IdentExpr {
  readonly kind: "ident";
  readonly id: number;
  readonly name: string;
}

/** `operand.field`; `testOnly` marks the expansion of `has(operand.field)`. */
export interface SelectExpr {
  readonly kind: "select";
  readonly id: number;
  readonly operand: Expr;
  readonly field: string;
  readonly testOnly: boolean;
}

/**
 * A function call. Operators are calls with their reference names (`_+_`, `_[_]`, `!_`, `_?_:_`…, see
 * `operators.ts`); `target` is set for receiver-style calls (`a.f(b)`).
 */
export interface CallExpr {
  readonly kind: "call";
  readonly id: number;
  readonly fn: string;
  readonly target: Expr | undefined;
  readonly args: readonly Expr[];
}

export interface ListExpr {
  readonly kind: "list";
  readonly id: number;
  readonly elements: readonly Expr[];
}

export interface MapEntry {
  readonly id: number;
  readonly key: Expr;
  readonly value: Expr;
}

export interface MapExpr {
  readonly kind: "map";
  readonly id: number;
  readonly entries: readonly MapEntry[];
}

export interface StructField {
  readonly id: number;
  readonly name: string;
  readonly value: Expr;
}

/** Message construction `a.b.C{f: v}`; a leading-dot type name keeps its dot. */
export interface StructExpr {
  readonly kind: "struct";
  readonly id: number;
  readonly typeName: string;
  readonly fields: readonly StructField[];
}

/**
 * The one looping form. Evaluation: `accu = accuInit`; for each element `iterVar` of `iterRange`, while
 * `loopCondition` holds, `accu = loopStep`; then `result`. Macros expand to it.
 */
export interface ComprehensionExpr {
  readonly kind: "comprehension";
  readonly id: number;
  readonly iterVar: string;
  readonly iterRange: Expr;
  readonly accuVar: string;
  readonly accuInit: Expr;
  readonly loopCondition: Expr;
  readonly loopStep: Expr;
  readonly result: Expr;
}

/** A parsed expression with its side tables. */
export interface Ast {
  readonly expr: Expr;
  readonly source: Source;
  /** Source offset (UTF-16) of every node id, map entry id and struct field id. */
  readonly offsets: ReadonlyMap<number, number>;
  /** For each comprehension id produced by a macro, the call as written. */
  readonly macroCalls: ReadonlyMap<number, CallExpr>;
}

/**
 * A side table keyed by node id (offsets, types, references). Ids are small consecutive integers, so an
 * array holds it: several times cheaper to fill than a `Map`, and a compile fills three of them. Values
 * are never `undefined`; iteration is in id order.
 */
export class IdTable<V extends NonNullable<unknown>> implements ReadonlyMap<number, V> {
  private readonly byId: (V | undefined)[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    return this.byId[id];
  }

  has(id: number): boolean {
    return this.byId[id] !== undefined;
  }

  set(id: number, value: V): this {
    if (this.byId[id] === undefined) this.count++;
    this.byId[id] = value;
    return this;
  }

  forEach(fn: (value: V, id: number, table: ReadonlyMap<number, V>) => void): void {
    const byId = this.byId;
    for (let id = 0; id < byId.length; id++) {
      const v = byId[id];
      if (v !== undefined) fn(v, id, this);
    }
  }

  entries(): MapIterator<[number, V]> {
    return this.asMap().entries();
  }

  keys(): MapIterator<number> {
    return this.asMap().keys();
  }

  values(): MapIterator<V> {
    return this.asMap().values();
  }

  [Symbol.iterator](): MapIterator<[number, V]> {
    return this.entries();
  }

  /** No phase iterates a table, so iteration goes through a Map made for the purpose. */
  private asMap(): Map<number, V> {
    const m = new Map<number, V>();
    this.forEach((v, id) => {
      m.set(id, v);
    });
    return m;
  }
}

/** The accumulator variable of macro expansions, spelled as no identifier can be. */
export const ACCUMULATOR = "@result";

/**
 * Allocates ids and records offsets while a tree is built. One builder builds one `Ast`; the parser, the
 * macro expander and test generators all build through it so ids stay unique.
 *
 * It also tracks each node's height as it is built (trees are built bottom-up), so the parser can refuse
 * a too-deep tree without walking it, and every later phase may recurse over the tree safely.
 */
/**
 * A name or string literal as the engine's one shared copy of it. Sliced from the source text, a string
 * of 13 or more UTF-16 units is kept by V8 as a view into that text, and every comparison with it and
 * every property read keyed by it pays for that: `event.type == "collision_started"` took 70 ns a run
 * with the literal as a slice, 19 ns interned. Shorter slices are copied and gain nothing measurable, so
 * they are left alone (interning costs parse time). An object's property keys are interned: reading one
 * back gives the interned copy.
 */
function interned(s: string): string {
  return s.length < 13 ? s : (Object.keys({ [s]: 0 })[0] ?? s);
}

export class AstBuilder {
  private nextId = 1;
  readonly offsets = new IdTable<number>();
  readonly macroCalls = new Map<number, CallExpr>();
  private readonly heights: number[] = [];
  /** The first node built taller than `heightLimit`, if any. */
  tooDeep: Expr | undefined;

  constructor(private readonly heightLimit = Number.POSITIVE_INFINITY) {}

  /** Nodes on the longest path from `e` down to a leaf, `e` included. */
  height(e: Expr): number {
    return this.heights[e.id] ?? 1;
  }

  id(offset: number): number {
    const id = this.nextId++;
    this.offsets.set(id, offset);
    return id;
  }

  /** Records `e`'s height: one more than its tallest child (`childHeight`, 0 for a leaf). */
  private node<E extends Expr>(e: E, childHeight: number): E {
    this.heights[e.id] = childHeight + 1;
    if (childHeight + 1 > this.heightLimit && this.tooDeep === undefined) this.tooDeep = e;
    return e;
  }

  private tallest(xs: readonly Expr[], start = 0): number {
    let h = start;
    for (const x of xs) {
      const xh = this.heights[x.id] ?? 1;
      if (xh > h) h = xh;
    }
    return h;
  }

  literal(offset: number, value: Literal): LiteralExpr {
    const v = value.type === "string" ? { type: "string" as const, value: interned(value.value) } : value;
    return this.node({ kind: "literal", id: this.id(offset), value: v }, 0);
  }

  ident(offset: number, name: string): IdentExpr {
    return this.node({ kind: "ident", id: this.id(offset), name: interned(name) }, 0);
  }

  select(offset: number, operand: Expr, field: string, testOnly = false): SelectExpr {
    const e: SelectExpr = { kind: "select", id: this.id(offset), operand, field: interned(field), testOnly };
    return this.node(e, this.height(operand));
  }

  call(offset: number, fn: string, args: readonly Expr[], target?: Expr): CallExpr {
    const e: CallExpr = { kind: "call", id: this.id(offset), fn, target, args };
    return this.node(e, this.tallest(args, target === undefined ? 0 : this.height(target)));
  }

  list(offset: number, elements: readonly Expr[]): ListExpr {
    return this.node({ kind: "list", id: this.id(offset), elements }, this.tallest(elements));
  }

  map(offset: number, entries: readonly MapEntry[]): MapExpr {
    let h = 0;
    for (const en of entries) h = Math.max(h, this.height(en.key), this.height(en.value));
    return this.node({ kind: "map", id: this.id(offset), entries }, h);
  }

  mapEntry(offset: number, key: Expr, value: Expr): MapEntry {
    return { id: this.id(offset), key, value };
  }

  struct(offset: number, typeName: string, fields: readonly StructField[]): StructExpr {
    let h = 0;
    for (const f of fields) h = Math.max(h, this.height(f.value));
    return this.node({ kind: "struct", id: this.id(offset), typeName, fields }, h);
  }

  structField(offset: number, name: string, value: Expr): StructField {
    return { id: this.id(offset), name, value };
  }

  comprehension(offset: number, parts: Omit<ComprehensionExpr, "kind" | "id">): ComprehensionExpr {
    // Spelled out rather than spread: V8 builds `{ kind, id, ...parts }` through a slow generic path.
    const { iterVar, iterRange, accuVar, accuInit, loopCondition, loopStep, result } = parts;
    const e: ComprehensionExpr = {
      kind: "comprehension",
      id: this.id(offset),
      iterVar,
      iterRange,
      accuVar,
      accuInit,
      loopCondition,
      loopStep,
      result,
    };
    return this.node(e, this.tallest([iterRange, accuInit, loopCondition, loopStep, result]));
  }

  finish(expr: Expr, source: Source): Ast {
    return { expr, source, offsets: this.offsets, macroCalls: this.macroCalls };
  }
}

/** The direct children of a node, in source order. The one place that knows every node's shape. */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case "literal":
    case "ident":
      return [];
    case "select":
      return [e.operand];
    case "call":
      return e.target === undefined ? [...e.args] : [e.target, ...e.args];
    case "list":
      return [...e.elements];
    case "map":
      return e.entries.flatMap((en) => [en.key, en.value]);
    case "struct":
      return e.fields.map((f) => f.value);
    case "comprehension":
      return [e.iterRange, e.accuInit, e.loopCondition, e.loopStep, e.result];
    default:
      return assertNever(e);
  }
}

export function assertNever(x: never): never {
  throw new Error(`unexpected node ${JSON.stringify(x)}`);
}
