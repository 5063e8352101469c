/**
 * An incremental window index: answers each primitive call without scanning the window.
 *
 * The selectors' key sets are known at load (REQ-5 makes them literals), so rows are indexed by each
 * key set in use: for every (key set, value tuple) a list of admission times, sorted because the
 * admission clock never goes back in seq order. `count` finds the window's start from a cursor that
 * follows it (`window-times.ts`);
 * `distinct` keeps, per tuple, each value's latest time. Rows are added in seq order before the row is
 * evaluated, so a query made while evaluating row N sees exactly rows 1..N.
 */
import { children, type Expr } from "../cel/index.js";
import type { LoadedRule } from "./compile-rule.js";
import { HOUR } from "./durations.js";
import { PRIMITIVE_NAMES } from "./environments.js";
import { indexRow, type JournalRow } from "./journal.js";
import { EVENT_KINDS, type EventKind } from "./kinds.js";
import {
  COUNT_SATURATION,
  DISTINCT_SATURATION,
  eventFieldValue,
  fieldValue,
  type IndexedField,
  type IndexedRow,
  isIndexedField,
  MAX_WINDOW_MS,
  type Selector,
  type SelectorKeys,
  type WindowReader,
} from "./window.js";
import { WindowTimes } from "./window-times.js";

type Key = Exclude<IndexedField, "kind">;

/** One key set a rule's selectors use, with the fields `distinct` counts over it. */
export interface SelectorShape {
  readonly kind: EventKind;
  readonly keys: readonly Key[];
  readonly distinctFields: readonly IndexedField[];
  /**
   * Keys every selector of this shape gives as a literal, with those literals: a row with another
   * value lands in a bucket no selector can reach, so it is not indexed at all (a backtest of a
   * verify rule indexes verify rows, not every tool row).
   */
  readonly literals: ReadonlyMap<Key, ReadonlySet<string | boolean>>;
}

interface Bucket {
  /** Admission times of the matching rows (one per matching path). */
  readonly times: WindowTimes;
  /** Per distinct field: each value's latest time. */
  readonly latest: Map<IndexedField, Map<string | boolean, number>>;
}

const signature = (kind: EventKind, keys: readonly string[]) => `${kind}|${keys.join(",")}`;

/** The selector shapes of a rule set, from the literal keys of every primitive call. */
export function selectorShapes(rules: readonly LoadedRule[]): SelectorShape[] {
  const shapes = new Map<
    string,
    {
      kind: EventKind;
      keys: Key[];
      distinct: Set<IndexedField>;
      // Per key: the literals seen, or "any" once one selector computes its value.
      values: Map<Key, Set<string | boolean> | "any">;
    }
  >();
  const visit = (e: Expr, on: EventKind): void => {
    if (
      e.kind === "call" &&
      e.target === undefined &&
      (PRIMITIVE_NAMES as readonly string[]).includes(e.fn)
    ) {
      const sel = e.fn === "distinct" ? e.args[1] : e.args[0];
      const field = e.fn === "distinct" ? e.args[0] : undefined;
      if (sel?.kind === "map") {
        // A computed `kind` may name any kind at run time, so its key set is indexed for all of them.
        let kinds: readonly EventKind[] = [on];
        const keys: Key[] = [];
        const literal = new Map<Key, string | boolean | undefined>();
        for (const { key, value } of sel.entries) {
          if (key.kind !== "literal" || key.value.type !== "string" || !isIndexedField(key.value.value))
            continue;
          const k = key.value.value;
          if (k !== "kind") {
            keys.push(k);
            // Paths are many per row and matched one by one: they are never filtered.
            literal.set(
              k,
              k !== "path" &&
                value.kind === "literal" &&
                (value.value.type === "string" || value.value.type === "bool")
                ? value.value.value
                : undefined,
            );
          } else
            kinds =
              value.kind === "literal" && value.value.type === "string"
                ? [value.value.value as EventKind]
                : EVENT_KINDS;
        }
        keys.sort();
        for (const kind of kinds) {
          const sig = signature(kind, keys);
          const shape = shapes.get(sig) ?? {
            kind,
            keys,
            distinct: new Set<IndexedField>(),
            values: new Map(),
          };
          if (
            field?.kind === "literal" &&
            field.value.type === "string" &&
            isIndexedField(field.value.value)
          ) {
            shape.distinct.add(field.value.value);
          }
          for (const [k, v] of literal) {
            const seen = shape.values.get(k) ?? new Set<string | boolean>();
            if (v === undefined || seen === "any") shape.values.set(k, "any");
            else shape.values.set(k, seen.add(v));
          }
          shapes.set(sig, shape);
        }
      }
    }
    for (const c of children(e)) visit(c, on);
  };
  for (const r of rules) visit(r.program.checked.expr, r.spec.on);
  return [...shapes.values()].map((s) => ({
    kind: s.kind,
    keys: s.keys,
    distinctFields: [...s.distinct],
    literals: new Map(
      [...s.values].flatMap(([k, v]): [Key, ReadonlySet<string | boolean>][] =>
        v === "any" ? [] : [[k, v]],
      ),
    ),
  }));
}

/**
 * Whether two lists of shapes index the same rows: same key sets, `distinct` fields and literal filters.
 * A reload keeps its window feed only then (a new literal value must not find its rows unindexed).
 */
export function sameShapes(a: readonly SelectorShape[], b: readonly SelectorShape[]): boolean {
  const canonical = (shapes: readonly SelectorShape[]) =>
    JSON.stringify(
      shapes
        .map((s) => [
          signature(s.kind, s.keys),
          [...s.distinctFields].sort(),
          [...s.literals].map(([k, v]) => [k, [...v].map(String).sort()]).sort(),
        ])
        .sort(),
    );
  return canonical(a) === canonical(b);
}

/** Whether a row can be found by some selector of the shape: its value is one of each literal key's. */
function reachable(value: (k: Exclude<Key, "path">) => string | boolean, shape: SelectorShape): boolean {
  for (const [k, values] of shape.literals) if (!values.has(value(k as Exclude<Key, "path">))) return false;
  return true;
}

/** Every value tuple a row takes for a key set: one per path when `path` is a key. */
function tuples(row: IndexedRow, keys: readonly Key[]): (string | boolean)[][] {
  if (!keys.includes("path")) {
    const tuple: (string | boolean)[] = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) tuple[i] = fieldValue(row, keys[i] as Exclude<Key, "path">);
    return [tuple];
  }
  let out: (string | boolean)[][] = [[]];
  for (const k of keys) {
    // A row counts once per distinct path, however often it lists one.
    const values = k === "path" ? [...new Set(row.paths)] : [fieldValue(row, k)];
    out = out.flatMap((t) => values.map((v) => [...t, v]));
  }
  return out;
}

/** Nested maps, one level per key of a shape, leading to the bucket of one value tuple. */
type Trie = Map<string | boolean, Trie | Bucket>;

interface Indexed {
  readonly shape: SelectorShape;
  readonly trie: Trie;
}

/** The bucket of `tuple` in `trie`, made on first use. A shape with no keys keeps it under "". */
function leaf(trie: Trie, tuple: readonly (string | boolean)[]): Bucket {
  if (tuple.length === 0) {
    let b = trie.get("") as Bucket | undefined;
    if (b === undefined) {
      b = { times: new WindowTimes(), latest: new Map() };
      trie.set("", b);
    }
    return b;
  }
  let node = trie;
  for (let i = 0; i < tuple.length - 1; i++) {
    const v = tuple[i] as string | boolean;
    let next = node.get(v) as Trie | undefined;
    if (next === undefined) {
      next = new Map();
      node.set(v, next);
    }
    node = next;
  }
  const last = tuple[tuple.length - 1] as string | boolean;
  let b = node.get(last) as Bucket | undefined;
  if (b === undefined) {
    b = { times: new WindowTimes(), latest: new Map() };
    node.set(last, b);
  }
  return b;
}

export class WindowIndex {
  private readonly shapes: ReadonlyMap<string, SelectorShape>;
  private readonly tries = new Map<string, Trie>();
  /** Per call site's key set (by identity: a compiled rule makes it once) and row kind: where it reads. */
  // Weak: a feed kept across a reload must not hold the old rules' call sites.
  private readonly sites = new WeakMap<SelectorKeys, Map<EventKind, Indexed>>();

  /** The shapes rows of each kind feed, with their tries. */
  private readonly byKind = new Map<EventKind, { readonly shape: SelectorShape; readonly trie: Trie }[]>();

  constructor(shapes: readonly SelectorShape[]) {
    this.shapes = new Map(shapes.map((s) => [signature(s.kind, s.keys), s]));
    for (const [sig, shape] of this.shapes) {
      const trie: Trie = new Map();
      this.tries.set(sig, trie);
      const list = this.byKind.get(shape.kind) ?? [];
      list.push({ shape, trie });
      this.byKind.set(shape.kind, list);
    }
  }

  /** Whether some shape would take the row: a row none takes need not be indexed (`indexRow`) at all. */
  reaches(row: JournalRow): boolean {
    const feeds = this.byKind.get(row.kind);
    if (feeds === undefined) return false;
    const value = (k: Exclude<Key, "path">) => eventFieldValue(row.event, k);
    return feeds.some(({ shape }) => reachable(value, shape));
  }

  /** Adds the next row in seq order. */
  add(row: IndexedRow): void {
    const feeds = this.byKind.get(row.kind);
    if (feeds === undefined) return;
    const value = (k: Exclude<Key, "path">) => fieldValue(row, k);
    for (const { shape, trie } of feeds) {
      if (!reachable(value, shape)) continue;
      for (const tuple of tuples(row, shape.keys)) {
        const bucket = leaf(trie, tuple);
        bucket.times.push(row.at);
        for (const f of shape.distinctFields) {
          let latest = bucket.latest.get(f);
          if (latest === undefined) {
            latest = new Map();
            bucket.latest.set(f, latest);
          }
          if (f === "path") for (const p of row.paths) latest.set(p, row.at);
          else {
            const v = f === "kind" ? row.kind : (row.fields[f] ?? "");
            if (v !== "") latest.set(v, row.at);
          }
        }
      }
    }
  }

  /** Drops what no window can reach any more: times at or before `before`. */
  prune(before: number): void {
    const visit = (node: Trie): void => {
      for (const [k, child] of node) {
        if (child instanceof Map) {
          visit(child);
          if (child.size === 0) node.delete(k);
          continue;
        }
        // Every `latest` time is the time of a row still in `times` (a prune drops both together), so
        // a bucket whose oldest time is inside the window has nothing to prune: skip it whole.
        const oldest = child.times.oldest;
        if (oldest !== undefined && oldest > before) continue;
        const left = child.times.dropThrough(before);
        for (const latest of child.latest.values())
          for (const [v, t] of latest) if (t <= before) latest.delete(v);
        if (left === 0) node.delete(k);
      }
    };
    for (const trie of this.tries.values()) visit(trie);
  }

  /** The shape and trie a selector's key set reaches for a row kind. */
  private indexed(kind: EventKind, keys: SelectorKeys): Indexed {
    let byKind = this.sites.get(keys);
    if (byKind === undefined) {
      byKind = new Map();
      this.sites.set(keys, byKind);
    }
    let found = byKind.get(kind);
    if (found === undefined) {
      const sig = signature(kind, [...keys.names].sort());
      const shape = this.shapes.get(sig);
      if (shape === undefined) throw new Error(`no index for selector keys ${sig}`);
      found = { shape, trie: this.tries.get(sig) as Trie };
      byKind.set(kind, found);
    }
    return found;
  }

  /** A reader for the row being evaluated: `now` is its `at`; rows after it have not been added. */
  readerAt(nowMs: number): WindowReader {
    const bucketFor = (selector: Selector): Bucket | undefined => {
      const found = this.indexed(selector.kind, selector.keys);
      // Walk the shape's trie key by key, in the shape's (sorted) key order.
      const { sorted } = selector.keys;
      let node: Trie | Bucket | undefined = found.trie;
      if (sorted.length === 0) return node.get("") as Bucket | undefined;
      for (let i = 0; i < sorted.length; i++) {
        if (!(node instanceof Map)) return undefined;
        node = node.get(selector.values[sorted[i] as number] as string | boolean);
      }
      return node instanceof Map ? undefined : node;
    };
    return {
      exists(selector, withinMs) {
        return this.count(selector, withinMs) > 0;
      },
      count(selector, withinMs) {
        const b = bucketFor(selector);
        if (b === undefined) return 0;
        return Math.min(b.times.countWithin(nowMs, withinMs), COUNT_SATURATION);
      },
      distinct(field, selector, withinMs) {
        const latest = bucketFor(selector)?.latest.get(field);
        if (latest === undefined) return 0;
        let n = 0;
        for (const t of latest.values()) if (t > nowMs - withinMs && ++n >= DISTINCT_SATURATION) break;
        return n;
      },
    };
  }

  /** Entries held, for the memory report. */
  get size(): number {
    let n = 0;
    const visit = (node: Trie): void => {
      for (const child of node.values()) {
        if (child instanceof Map) visit(child);
        else n += child.times.size;
      }
    };
    for (const trie of this.tries.values()) visit(trie);
    return n;
  }
}

/**
 * The index a fold feeds row by row, in seq order: each row is added before it is evaluated, and once
 * an hour of journal time what no 7-day window can reach is pruned, so memory follows the last week
 * rather than the whole journal. The live evaluator and backtest both read through one.
 */
export class WindowFeed {
  private readonly index: WindowIndex;
  private prunedAt = Number.NEGATIVE_INFINITY;
  private lastSeq = 0;

  constructor(shapes: readonly SelectorShape[]) {
    this.index = new WindowIndex(shapes);
  }

  /** Adds the next row; a row at or below the last seq added is ignored (it is already in). */
  add(row: JournalRow): void {
    if (row.seq <= this.lastSeq) return;
    this.lastSeq = row.seq;
    if (row.at - this.prunedAt >= HOUR) {
      this.index.prune(row.at - MAX_WINDOW_MS);
      this.prunedAt = row.at;
    }
    if (this.index.reaches(row)) this.index.add(indexRow(row));
  }

  /** The last seq added: the feed answers for rows up to it. */
  get seq(): number {
    return this.lastSeq;
  }

  readerAt(nowMs: number): WindowReader {
    return this.index.readerAt(nowMs);
  }

  get size(): number {
    return this.index.size;
  }
}

/**
 * A `WindowFor` over `rows` (in seq order, possibly starting before the first row evaluated, so windows
 * look back): rows are added to the feed as evaluation reaches them.
 */
export function indexedWindows(
  rows: readonly JournalRow[],
  shapes: readonly SelectorShape[],
): (row: JournalRow) => WindowReader {
  const feed = new WindowFeed(shapes);
  let next = 0;
  return (row) => {
    while (next < rows.length && (rows[next] as JournalRow).seq <= row.seq)
      feed.add(rows[next++] as JournalRow);
    return feed.readerAt(row.at);
  };
}
