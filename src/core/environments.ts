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
  type SelectorKey,
  type SelectorKeys,
  selectorKeys,
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

/** CEL ints are bigints; a count is small and asked for on every row, so the common ones are made once. */
const SMALL_INTS: readonly bigint[] = Array.from({ length: 1025 }, (_, i) => BigInt(i));
const asInt = (n: number): bigint => SMALL_INTS[n] ?? BigInt(n);

/** A selector as a call site writes it: its key set, fixed at load, and where its `kind` entry is. */
interface SelectorSite {
  readonly keys: SelectorKeys;
  /** The position of the `kind` entry among the written entries, or -1 when it defaults to `on`. */
  readonly kindAt: number;
}

function selectorSite(written: readonly string[]): SelectorSite | CelError {
  const names: SelectorKey[] = [];
  let kindAt = -1;
  for (let i = 0; i < written.length; i++) {
    const k = written[i] as string;
    if (!isIndexedField(k)) return new CelError(`selector key ${k} is not an indexed field`);
    if (k === "kind") kindAt = i;
    else names.push(k);
  }
  return { keys: selectorKeys(names), kindAt };
}

/** The selector of one call: the site's keys with this row's values (one per written entry). */
function selectorAt(kind: EventKind, site: SelectorSite, values: readonly Value[]): Selector | CelError {
  let selected = kind;
  let fields = values;
  if (site.kindAt >= 0) {
    const k = values[site.kindAt];
    if (typeof k !== "string") return new CelError("selector kind must be a string");
    selected = k as EventKind;
    fields = values.filter((_, i) => i !== site.kindAt);
  }
  for (let i = 0; i < fields.length; i++) {
    const v = fields[i];
    if (typeof v !== "string" && typeof v !== "boolean")
      return new CelError(`selector value for ${site.keys.names[i]} must be a string or a bool`);
  }
  return { kind: selected, keys: site.keys, values: fields as readonly (string | boolean)[] };
}

/** The selector a map computed at run time denotes (rules write literals, which arrive as records). */
function selectorOfMap(kind: EventKind, sel: Value): Selector | CelError {
  if (!(sel instanceof CelMap)) return new CelError("a selector must be a map");
  const written: string[] = [];
  const values: Value[] = [];
  for (const [k, v] of sel.pairs()) {
    if (typeof k !== "string") return new CelError(`selector key ${String(k)} is not an indexed field`);
    written.push(k);
    values.push(v);
  }
  const site = selectorSite(written);
  return site instanceof CelError ? site : selectorAt(kind, site, values);
}

/** How a call site reads its selector argument: a literal's values against its keys, or a map. */
function selectorReader(kind: EventKind, written: readonly string[] | undefined) {
  if (written === undefined) return (arg: Value): Selector | CelError => selectorOfMap(kind, arg);
  const site = selectorSite(written);
  if (site instanceof CelError) return () => site;
  return (arg: Value): Selector | CelError => selectorAt(kind, site, arg as readonly Value[]);
}

function withinOf(d: Value): number | CelError {
  return d instanceof Duration ? Number(d.nanos / NANOS_PER_MS) : new CelError("a window must be a duration");
}

/** What one primitive asks the reader, saturated as REQ-5 says. */
type Ask = (
  reader: WindowReader,
  selector: Selector,
  withinMs: number,
  field: IndexedField,
) => number | boolean;

interface PrimitiveShape {
  readonly name: (typeof PRIMITIVE_NAMES)[number];
  readonly id: string;
  readonly result: typeof T.int | typeof T.bool;
  /** Whether the first argument is `distinct`'s field. */
  readonly field: boolean;
  readonly ask: Ask;
}

const SHAPES: readonly PrimitiveShape[] = [
  {
    name: "count",
    id: "rules_count",
    result: T.int,
    field: false,
    ask: (r, s, w) => Math.min(r.count(s, w), COUNT_SATURATION),
  },
  {
    name: "distinct",
    id: "rules_distinct",
    result: T.int,
    field: true,
    ask: (r, s, w, field) => Math.min(r.distinct(field, s, w), DISTINCT_SATURATION),
  },
  { name: "exists", id: "rules_exists", result: T.bool, field: false, ask: (r, s, w) => r.exists(s, w) },
];

/** Asks the reader, turning a failure to read the store into a `store_error`. */
function asked(
  shape: PrimitiveShape,
  reader: WindowReader,
  selector: Selector,
  withinMs: number,
  field: IndexedField,
): Result {
  try {
    const v = shape.ask(reader, selector, withinMs, field);
    return typeof v === "number" ? asInt(v) : v;
  } catch (e) {
    return new StoreError(`window read failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function fieldOf(v: Value | undefined): IndexedField | CelError {
  return typeof v === "string" && isIndexedField(v) ? v : new CelError("distinct needs an indexed field");
}

function primitive(kind: EventKind, shape: PrimitiveShape): FunctionDecl {
  const selAt = shape.field ? 1 : 0;
  const selectorType = T.map(T.string, T.dyn);
  return {
    name: shape.name,
    overloads: [
      {
        id: shape.id,
        params: shape.field ? [T.string, selectorType, T.duration] : [selectorType, T.duration],
        result: shape.result,
        cost: { fixed: PRIMITIVE_COST },
        // A rule's selector is a map literal and its window a literal duration (REQ-5): the key set and
        // the window are settled here, once, and only the selector's values are computed per row.
        prepare: (site) => {
          const selectorOf = selectorReader(kind, site.recordKeys[selAt]);
          const fixedField = shape.field ? site.constants[0] : "kind";
          const knownField = fixedField === undefined ? undefined : fieldOf(fixedField);
          const fixedWithin = site.constants[selAt + 1];
          const withinMs = fixedWithin === undefined ? undefined : withinOf(fixedWithin);
          return (vars, args) => {
            const reader = readerOf(vars);
            if (reader instanceof CelError) return reader;
            const field = knownField ?? fieldOf(args[0]);
            if (field instanceof CelError) return field;
            const selector = selectorOf(args[selAt] as Value);
            if (selector instanceof CelError) return selector;
            const within = withinMs ?? withinOf(args[selAt + 1] as Value);
            return within instanceof CelError ? within : asked(shape, reader, selector, within, field);
          };
        },
      },
    ],
  };
}

function environment(kind: EventKind): Env {
  const name = EVENT_TYPE_NAMES[kind];
  return standardEnv.extend({
    objectTypes: [{ name, fields: EVENT_FIELDS[kind] }],
    variables: [
      { name: "event", type: T.object(name) },
      { name: "now", type: T.timestamp },
    ],
    functions: SHAPES.map((shape) => primitive(kind, shape)),
  });
}

export const ENVIRONMENTS: Readonly<Record<EventKind, Env>> = {
  run_event: environment("run_event"),
  attempt_event: environment("attempt_event"),
  graph_event: environment("graph_event"),
  fact_event: environment("fact_event"),
  tick: environment("tick"),
};
