/**
 * One CEL environment per event kind (SPEC-0029 REQ-4): exactly `event` (that kind's object type) and
 * `now`, the standard library and macros, and the three windowed primitives of REQ-5. No clock, no
 * map-typed variable, no extension.
 */
import {
  type Activation,
  CelError,
  CelMap,
  Duration,
  type Env,
  type FunctionDecl,
  type Result,
  standardEnv,
  T,
  type Value,
} from "../cel/index.js";
import { EVENT_FIELDS, EVENT_TYPE_NAMES, type EventKind } from "./kinds.js";
import {
  COUNT_SATURATION,
  DISTINCT_SATURATION,
  type IndexedField,
  isIndexedField,
  type Selector,
  type WindowReader,
} from "./window.js";

/** Each primitive call costs exactly this many units, in the estimate and at run time (REQ-6). */
export const PRIMITIVE_COST = 100;

/** Where the activation carries the window reader bound to the evaluated row; no CEL name can reach it. */
export const WINDOW = "@window";

export const PRIMITIVE_NAMES = ["count", "distinct", "exists"] as const;

/** The primitives fail as evaluation errors the core records as `store_error`. */
export class StoreError extends CelError {}

const NANOS_PER_MS = 1_000_000n;

function readerOf(vars: Activation): WindowReader | CelError {
  const reader = vars[WINDOW] as WindowReader | undefined;
  return reader === undefined ? new StoreError("no journal window is bound to this evaluation") : reader;
}

/** The selector a map literal denotes; the validators have already checked its keys at load. */
function selectorOf(kind: EventKind, sel: Value): Selector | CelError {
  if (!(sel instanceof CelMap)) return new CelError("a selector must be a map");
  let selected = kind;
  const fields = new Map<Exclude<IndexedField, "kind">, string | boolean>();
  for (const [k, v] of sel.pairs()) {
    if (typeof k !== "string" || !isIndexedField(k))
      return new CelError(`selector key ${String(k)} is not an indexed field`);
    if (k === "kind") {
      if (typeof v !== "string") return new CelError("selector kind must be a string");
      selected = v as EventKind;
    } else if (typeof v === "string" || typeof v === "boolean") fields.set(k, v);
    else return new CelError(`selector value for ${k} must be a string or a bool`);
  }
  return { kind: selected, fields };
}

function withinOf(d: Value): number | CelError {
  return d instanceof Duration ? Number(d.nanos / NANOS_PER_MS) : new CelError("a window must be a duration");
}

/** Runs a reader call, turning a failure to read the store into a `store_error`. */
function guarded(read: () => number | boolean): Result {
  try {
    const v = read();
    return typeof v === "number" ? BigInt(v) : v;
  } catch (e) {
    return new StoreError(`window read failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

interface Query {
  readonly reader: WindowReader;
  readonly selector: Selector;
  readonly within: number;
}

/** The reader, selector and window of one primitive call, or the first thing wrong with them. */
function query(
  kind: EventKind,
  vars: Activation,
  sel: Value | undefined,
  within: Value | undefined,
): Query | CelError {
  const reader = readerOf(vars);
  if (reader instanceof CelError) return reader;
  const selector = selectorOf(kind, sel as Value);
  if (selector instanceof CelError) return selector;
  const w = withinOf(within as Value);
  return w instanceof CelError ? w : { reader, selector, within: w };
}

function primitives(kind: EventKind): FunctionDecl[] {
  const selector = T.map(T.string, T.dyn);
  return [
    {
      name: "count",
      overloads: [
        {
          id: "rules_count",
          params: [selector, T.duration],
          result: T.int,
          cost: { fixed: PRIMITIVE_COST },
          contextual: (vars, sel, within) => {
            const q = query(kind, vars, sel, within);
            return q instanceof CelError
              ? q
              : guarded(() => Math.min(q.reader.count(q.selector, q.within), COUNT_SATURATION));
          },
        },
      ],
    },
    {
      name: "distinct",
      overloads: [
        {
          id: "rules_distinct",
          params: [T.string, selector, T.duration],
          result: T.int,
          cost: { fixed: PRIMITIVE_COST },
          contextual: (vars, field, sel, within) => {
            const q = query(kind, vars, sel, within);
            if (q instanceof CelError) return q;
            if (typeof field !== "string" || !isIndexedField(field))
              return new CelError("distinct needs an indexed field");
            return guarded(() =>
              Math.min(q.reader.distinct(field, q.selector, q.within), DISTINCT_SATURATION),
            );
          },
        },
      ],
    },
    {
      name: "exists",
      overloads: [
        {
          id: "rules_exists",
          params: [selector, T.duration],
          result: T.bool,
          cost: { fixed: PRIMITIVE_COST },
          contextual: (vars, sel, within) => {
            const q = query(kind, vars, sel, within);
            if (q instanceof CelError) return q;
            return guarded(() => q.reader.exists(q.selector, q.within));
          },
        },
      ],
    },
  ];
}

function environment(kind: EventKind): Env {
  const name = EVENT_TYPE_NAMES[kind];
  return standardEnv.extend({
    objectTypes: [{ name, fields: EVENT_FIELDS[kind] }],
    variables: [
      { name: "event", type: T.object(name) },
      { name: "now", type: T.timestamp },
    ],
    functions: primitives(kind),
  });
}

export const ENVIRONMENTS: Readonly<Record<EventKind, Env>> = {
  run_event: environment("run_event"),
  graph_event: environment("graph_event"),
  fact_event: environment("fact_event"),
  tick: environment("tick"),
};
