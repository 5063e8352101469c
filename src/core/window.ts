/**
 * The windowed primitives' view of the journal (SPEC-0029 REQ-5): rows whose `at` is in
 * `(now - within, now]` and whose seq is at most the evaluated row's, that row included. A reader is
 * bound to one evaluated row; the same selector over the same rows gives the same answer in live
 * evaluation and in backtest.
 */
import { DAY } from "./durations.js";
import type { EventKind } from "./kinds.js";

/** The longest window a primitive may ask for (REQ-5): older rows can be pruned. */
export const MAX_WINDOW_MS = 7 * DAY;
/**
 * The least journal retention the daemon accepts: the longest window a rule can read (7d) plus the 30
 * days a backtest replays, so neither ever reads past the journal's start.
 */
export const MIN_JOURNAL_RETENTION = 37 * DAY;

/** The fields a selector may name: the journal's indexed columns. */
export const INDEXED_FIELDS = [
  "kind",
  "type",
  "harness",
  "run",
  "repo",
  "branch",
  "path",
  "tool",
  "action",
  "is_error",
  "digest",
  "outcome",
  "cause_digest",
  "edge",
  "predicate",
  "status",
  "scope",
] as const;
export type IndexedField = (typeof INDEXED_FIELDS)[number];

export const isIndexedField = (s: string): s is IndexedField =>
  (INDEXED_FIELDS as readonly string[]).includes(s);

/** A selector key other than `kind`, which picks the row kind rather than a field. */
export type SelectorKey = Exclude<IndexedField, "kind">;

/**
 * A selector's keys as its call is written, fixed at load: a call site makes one, and every row it
 * evaluates reuses it, so the window index can find its key set without building anything per row.
 */
export interface SelectorKeys {
  /** The keys other than `kind`, in source order. */
  readonly names: readonly SelectorKey[];
  /** Positions in `names`, in sorted key order: the order the window index walks a value tuple. */
  readonly sorted: readonly number[];
  /** The sorted names joined: the same for every call site with this key set. */
  readonly signature: string;
}

export function selectorKeys(names: readonly SelectorKey[]): SelectorKeys {
  const sorted = names
    .map((_, i) => i)
    .sort((a, b) => ((names[a] as string) < (names[b] as string) ? -1 : 1));
  return { names, sorted, signature: sorted.map((i) => names[i]).join(",") };
}

/** An equality conjunction over indexed fields; `kind` is always set (it defaults to the rule's `on`). */
export interface Selector {
  readonly kind: EventKind;
  readonly keys: SelectorKeys;
  /** One value per key, in `keys.names` order. */
  readonly values: readonly (string | boolean)[];
}

/** A selector from its fields: for tests, and for readers built outside a compiled rule. */
export function selectorOf(
  kind: EventKind,
  fields: Readonly<Partial<Record<SelectorKey, string | boolean>>>,
): Selector {
  const names = Object.keys(fields) as SelectorKey[];
  return { kind, keys: selectorKeys(names), values: names.map((k) => fields[k] as string | boolean) };
}

/** A selector's fields in source order, for explain. */
export function selectorFields(s: Selector): [SelectorKey, string | boolean][] {
  return s.keys.names.map((k, i) => [k, s.values[i] as string | boolean]);
}

export const COUNT_SATURATION = 10_000;
export const DISTINCT_SATURATION = 1_000;

export interface WindowReader {
  /** Matching rows in the window, saturating at `COUNT_SATURATION`. */
  count(selector: Selector, withinMs: number): number;
  /** Distinct values of `field` among them, saturating at `DISTINCT_SATURATION`. */
  distinct(field: IndexedField, selector: Selector, withinMs: number): number;
  /** Whether any row matches: `count > 0`. */
  exists(selector: Selector, withinMs: number): boolean;
}

/** One journal row as the window sees it: its indexed fields, with `paths` for the `path` key. */
export interface IndexedRow {
  readonly seq: number;
  /** Admission time, ms since the epoch. */
  readonly at: number;
  readonly kind: EventKind;
  readonly fields: Readonly<Partial<Record<Exclude<IndexedField, "kind" | "path">, string | boolean>>>;
  readonly paths: readonly string[];
}

/** A row's value for an indexed field; unset reads as the zero value (`""`, or `false` for is_error). */
export function fieldValue(row: IndexedRow, field: Exclude<IndexedField, "kind" | "path">): string | boolean {
  return row.fields[field] ?? zeroOf(field);
}

/** The same value read from the event itself, before `indexRow` (which keeps only strings and bools). */
export function eventFieldValue(
  event: Readonly<Record<string, unknown>>,
  field: Exclude<IndexedField, "kind" | "path">,
): string | boolean {
  const v = event[field];
  return typeof v === "string" || typeof v === "boolean" ? v : zeroOf(field);
}

const zeroOf = (field: IndexedField): string | boolean => (field === "is_error" ? false : "");

export function matches(row: IndexedRow, selector: Selector): boolean {
  if (row.kind !== selector.kind) return false;
  const { names } = selector.keys;
  for (let i = 0; i < names.length; i++) {
    const field = names[i] as SelectorKey;
    const value = selector.values[i];
    if (field === "path") {
      if (!row.paths.includes(value as string)) return false;
    } else if (fieldValue(row, field) !== value) return false;
  }
  return true;
}

/** The values `distinct` counts for a row: an unset (empty) field is no value, as SQL's NULL is none. */
function valuesOf(row: IndexedRow, field: IndexedField): readonly (string | boolean)[] {
  if (field === "kind") return [row.kind];
  if (field === "path") return row.paths;
  const v = row.fields[field];
  return v === undefined || v === "" ? [] : [v];
}

/**
 * The reference reader: a scan of the rows, bound to the evaluated row's seq and `now`. The shell's
 * indexed reader must agree with it (a property test holds them side by side).
 */
export function scanReader(rows: readonly IndexedRow[], seq: number, nowMs: number): WindowReader {
  const inWindow = (row: IndexedRow, withinMs: number) =>
    row.seq <= seq && row.at > nowMs - withinMs && row.at <= nowMs;
  return {
    exists(selector, withinMs) {
      return this.count(selector, withinMs) > 0;
    },
    count(selector, withinMs) {
      let n = 0;
      for (const row of rows) {
        if (inWindow(row, withinMs) && matches(row, selector) && ++n >= COUNT_SATURATION) break;
      }
      return n;
    },
    distinct(field, selector, withinMs) {
      const seen = new Set<string | boolean>();
      for (const row of rows) {
        if (!inWindow(row, withinMs) || !matches(row, selector)) continue;
        for (const v of valuesOf(row, field)) seen.add(v);
        if (seen.size >= DISTINCT_SATURATION) return DISTINCT_SATURATION;
      }
      return seen.size;
    },
  };
}
