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
import type { LoadedRule } from "./compile-rule.js";
import { HOUR } from "./durations.js";
import { type EventFields, eventPaths, type JournalRow } from "./journal.js";
import { EVENT_KINDS, type EventKind } from "./kinds.js";
import { type PrimitiveCallExpr, primitiveArgs, primitiveCallsIn } from "./primitive-calls.js";
import {
  COUNT_SATURATION,
  DISTINCT_SATURATION,
  eventFieldValue,
  type IndexedField,
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
  const add = (call: PrimitiveCallExpr, on: EventKind): void => {
    const { field, selector: sel } = primitiveArgs(call);
    if (sel?.kind !== "map") return;
    // A computed `kind` may name any kind at run time, so its key set is indexed for all of them.
    let kinds: readonly EventKind[] = [on];
    const keys: Key[] = [];
    const literal = new Map<Key, string | boolean | undefined>();
    for (const { key, value } of sel.entries) {
      if (key.kind !== "literal" || key.value.type !== "string" || !isIndexedField(key.value.value)) continue;
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
      if (field?.kind === "literal" && field.value.type === "string" && isIndexedField(field.value.value)) {
        shape.distinct.add(field.value.value);
      }
      for (const [k, v] of literal) {
        const seen = shape.values.get(k) ?? new Set<string | boolean>();
        if (v === undefined || seen === "any") shape.values.set(k, "any");
        else shape.values.set(k, seen.add(v));
      }
      shapes.set(sig, shape);
    }
  };
  for (const r of rules) for (const call of primitiveCallsIn(r.program.checked.expr)) add(call, r.spec.on);
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
 * Whether any of the shapes can index a row of this kind and event type, and so reads its event: a
 * shape whose selectors all name a literal `type` indexes only rows of those types, and likewise for
 * each other literal key whose value `known` gives (`undefined`: not known, which rules nothing out).
 */
export function shapesIndex(
  shapes: readonly SelectorShape[],
  kind: EventKind,
  type: string,
  known: (field: string) => string | boolean | undefined = () => undefined,
): boolean {
  return shapes.some((s) => {
    if (s.kind !== kind) return false;
    for (const [key, allowed] of s.literals) {
      const v = key === "type" ? type : known(key);
      if (v !== undefined && !allowed.has(v)) return false;
    }
    return true;
  });
}

/** The event types of this kind `shapesIndex` may answer true for, or `"any"` (a shape with no `type` literal). */
export function shapeTypes(shapes: readonly SelectorShape[], kind: EventKind): ReadonlySet<string> | "any" {
  const types = new Set<string>();
  for (const s of shapes) {
    if (s.kind !== kind) continue;
    const literal = s.literals.get("type");
    if (literal === undefined) return "any";
    for (const t of literal) if (typeof t === "string") types.add(t);
  }
  return types;
}

/** The keys the shapes of this kind filter on by literal values, `type` aside. */
export function literalKeys(shapes: readonly SelectorShape[], kind: EventKind): ReadonlySet<string> {
  return new Set(shapes.filter((s) => s.kind === kind).flatMap((s) => [...s.literals.keys()]));
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

/** A shape's literal filters as parallel arrays, walked for every row the shape's kind admits. */
interface Filters {
  readonly keys: readonly Exclude<Key, "path">[];
  readonly allowed: readonly ReadonlySet<string | boolean>[];
}

const filtersOf = (shape: SelectorShape): Filters => ({
  keys: [...shape.literals.keys()] as Exclude<Key, "path">[],
  allowed: [...shape.literals.values()],
});

/** Whether a row can be found by some selector of the shape: its value is one of each literal key's. */
function reachable(event: EventFields, filters: Filters): boolean {
  const { keys, allowed } = filters;
  for (let i = 0; i < keys.length; i++)
    if (
      !(allowed[i] as ReadonlySet<string | boolean>).has(
        eventFieldValue(event, keys[i] as Exclude<Key, "path">),
      )
    )
      return false;
  return true;
}

/** Nested maps, one level per key of a shape, leading to the bucket of one value tuple. */
type Trie = Map<string | boolean, Trie | Bucket>;

interface Indexed {
  readonly shape: SelectorShape;
  readonly filters: Filters;
  /** Whether `path` is one of the keys: a row then lands in one bucket per distinct path. */
  readonly byPath: boolean;
  readonly trie: Trie;
  /**
   * The last value tuple looked up (in sorted key order), its bucket, and the index's generation then:
   * the rules of one row mostly ask for the evaluated event's own tuple, one rule after another, so
   * the walk is made once per row rather than once per call. Any add or prune makes it stale.
   */
  last: { readonly values: (string | boolean)[]; bucket: Bucket | undefined; generation: number };
}

const newBucket = (): Bucket => ({ times: new WindowTimes(), latest: new Map() });

/**
 * The bucket a row falls in for a shape's keys, made on first use; `path`, when it is a key, takes
 * the value given. A shape with no keys keeps its one bucket under "".
 */
function leaf(trie: Trie, keys: readonly Key[], event: EventFields, path: string): Bucket {
  if (keys.length === 0) {
    let b = trie.get("") as Bucket | undefined;
    if (b === undefined) {
      b = newBucket();
      trie.set("", b);
    }
    return b;
  }
  let node = trie;
  const last = keys.length - 1;
  for (let i = 0; i < last; i++) {
    const k = keys[i] as Key;
    const v = k === "path" ? path : eventFieldValue(event, k);
    let next = node.get(v) as Trie | undefined;
    if (next === undefined) {
      next = new Map();
      node.set(v, next);
    }
    node = next;
  }
  const k = keys[last] as Key;
  const v = k === "path" ? path : eventFieldValue(event, k);
  let b = node.get(v) as Bucket | undefined;
  if (b === undefined) {
    b = newBucket();
    node.set(v, b);
  }
  return b;
}

export class WindowIndex {
  private readonly tries: readonly Trie[];
  /** The shapes rows of each kind feed, with their tries. */
  private readonly byKind = new Map<EventKind, Indexed[]>();
  /** By a selector's key-set signature: the shapes it reads, one per row kind (usually one in all). */
  private readonly byKeys = new Map<string, Indexed[]>();

  constructor(shapes: readonly SelectorShape[]) {
    const tries: Trie[] = [];
    for (const shape of shapes) {
      const indexed: Indexed = {
        shape,
        filters: filtersOf(shape),
        byPath: shape.keys.includes("path"),
        trie: new Map(),
        last: { values: [], bucket: undefined, generation: -1 },
      };
      tries.push(indexed.trie);
      this.byKind.set(shape.kind, [...(this.byKind.get(shape.kind) ?? []), indexed]);
      const keySet = shape.keys.join(",");
      this.byKeys.set(keySet, [...(this.byKeys.get(keySet) ?? []), indexed]);
    }
    this.tries = tries;
  }

  /** Bumped by every add and prune: a lookup remembered at another generation is stale. */
  private generation = 0;

  /** Adds the next row in seq order, to every shape it can be found by. */
  add(row: JournalRow): void {
    this.generation++;
    const feeds = this.byKind.get(row.kind);
    if (feeds === undefined) return;
    const { event } = row;
    for (let i = 0; i < feeds.length; i++) {
      const { shape, filters, byPath, trie } = feeds[i] as Indexed;
      if (!reachable(event, filters)) continue;
      if (!byPath) this.record(leaf(trie, shape.keys, event, ""), shape, row);
      // A row counts once per distinct path, however often it lists one.
      else
        for (const p of new Set(eventPaths(event))) this.record(leaf(trie, shape.keys, event, p), shape, row);
    }
  }

  private record(bucket: Bucket, shape: SelectorShape, row: JournalRow): void {
    bucket.times.push(row.at);
    for (const f of shape.distinctFields) {
      let latest = bucket.latest.get(f);
      if (latest === undefined) {
        latest = new Map();
        bucket.latest.set(f, latest);
      }
      if (f === "path") for (const p of eventPaths(row.event)) latest.set(p, row.at);
      else {
        // An unset field is no value, as SQL's NULL is none (`valuesOf` in window.ts).
        const v = f === "kind" ? row.kind : row.event[f];
        if ((typeof v === "string" && v !== "") || typeof v === "boolean") latest.set(v, row.at);
      }
    }
  }

  /** Drops what no window can reach any more: times at or before `before`. */
  prune(before: number): void {
    this.generation++;
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
    for (const trie of this.tries) visit(trie);
  }

  /** The shape and trie a selector's key set reaches for a row kind. */
  private indexed(kind: EventKind, keys: SelectorKeys): Indexed {
    const shapes = this.byKeys.get(keys.signature);
    let found: Indexed | undefined;
    if (shapes !== undefined)
      for (let i = 0; i < shapes.length && found === undefined; i++)
        if ((shapes[i] as Indexed).shape.kind === kind) found = shapes[i];
    if (found === undefined) throw new Error(`no index for selector keys ${kind}|${keys.signature}`);
    return found;
  }

  /** A reader for the row being evaluated: `now` is its `at`; rows after it have not been added. */
  readerAt(nowMs: number): WindowReader {
    return new IndexReader(this, nowMs);
  }

  /** The bucket of a selector's value tuple, if any row reached it. */
  bucketFor(selector: Selector): Bucket | undefined {
    const found = this.indexed(selector.kind, selector.keys);
    const { sorted } = selector.keys;
    const { values } = selector;
    const last = found.last;
    if (last.generation === this.generation) {
      let same = true;
      for (let i = 0; i < sorted.length && same; i++) same = values[sorted[i] as number] === last.values[i];
      if (same) return last.bucket;
    }
    // Walk the shape's trie key by key, in the shape's (sorted) key order.
    let node: Trie | Bucket | undefined = found.trie;
    if (sorted.length === 0) node = node.get("");
    for (let i = 0; i < sorted.length; i++) {
      const v = values[sorted[i] as number] as string | boolean;
      last.values[i] = v;
      if (node instanceof Map) node = node.get(v);
    }
    const bucket = node instanceof Map ? undefined : node;
    last.bucket = bucket;
    last.generation = this.generation;
    return bucket;
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
    for (const trie of this.tries) visit(trie);
    return n;
  }
}

/** The index's answers for one evaluated row (a class: a fold makes one per row). */
class IndexReader implements WindowReader {
  constructor(
    private readonly index: WindowIndex,
    private readonly nowMs: number,
  ) {}

  exists(selector: Selector, withinMs: number): boolean {
    return this.count(selector, withinMs) > 0;
  }

  count(selector: Selector, withinMs: number): number {
    const b = this.index.bucketFor(selector);
    if (b === undefined) return 0;
    return Math.min(b.times.countWithin(this.nowMs, withinMs), COUNT_SATURATION);
  }

  distinct(field: IndexedField, selector: Selector, withinMs: number): number {
    const latest = this.index.bucketFor(selector)?.latest.get(field);
    if (latest === undefined) return 0;
    const cut = this.nowMs - withinMs;
    let n = 0;
    for (const t of latest.values()) if (t > cut && ++n >= DISTINCT_SATURATION) break;
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
    this.index.add(row);
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
