/**
 * Merging our hook entries into an agent's settings text, and taking them out again. Both agents keep
 * hooks as `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler, …]}, …]}}` beside other keys. Install
 * appends one group per event (keeping an identical one already there, so a second install changes
 * nothing, and replacing ours when it differs); uninstall removes our handlers, then the groups they
 * leave empty, then the event keys and the `hooks` key install created once they are empty. Every edit
 * is made in the text (`json-edit.ts`), so what is not ours keeps its bytes.
 */
import {
  appendItem,
  appendMember,
  detectStyle,
  type JsonStyle,
  NEW_FILE_STYLE,
  removeChild,
} from "./json-edit.js";
import {
  type JsonArray,
  type JsonNode,
  type JsonObject,
  member,
  nodeValue,
  parseJsonText,
} from "./json-text.js";

export interface Entry {
  readonly event: string;
  readonly group: unknown;
}

/** Whether a handler is one of ours (`hook-entries.ts`'s `isOurHandler`, for one agent and harness). */
export type Ours = (handler: unknown) => boolean;

/** The settings are JSON, but not the shape both agents read: nothing is written. */
export class SettingsShapeError extends Error {
  constructor(
    message: string,
    /** Where in the text the offending value starts. */
    readonly offset: number,
  ) {
    super(message);
    this.name = "SettingsShapeError";
  }
}

export interface MergeResult {
  readonly text: string;
  readonly changed: boolean;
  /** The keys this edit created: `hooks`, and `hooks.<Event>` for each event array. */
  readonly created: readonly string[];
}

export interface RemoveResult {
  readonly text: string;
  readonly changed: boolean;
  /** How many of our handlers were removed. */
  readonly removed: number;
}

const EMPTY_FILE = "{}\n";

function root(text: string): JsonObject {
  const node = parseJsonText(text);
  if (node.kind !== "object") throw new SettingsShapeError("the settings must be a JSON object", node.start);
  return node;
}

/** The `hooks` object, undefined when absent. */
function hooksOf(text: string): JsonObject | undefined {
  const m = member(root(text), "hooks");
  if (m === undefined) return undefined;
  if (m.value.kind !== "object") throw new SettingsShapeError('"hooks" must be an object', m.value.start);
  return m.value;
}

function eventArray(hooks: JsonObject, event: string): JsonArray | undefined {
  const m = member(hooks, event);
  if (m === undefined) return undefined;
  if (m.value.kind !== "array")
    throw new SettingsShapeError(`"hooks.${event}" must be an array of matcher groups`, m.value.start);
  return m.value;
}

/** The handler arrays of the groups of an event array (groups of another shape are nobody's concern here). */
function handlerArrays(event: JsonArray): (JsonArray | undefined)[] {
  return event.items.map((g) => {
    if (g.kind !== "object") return undefined;
    const h = member(g, "hooks");
    return h !== undefined && h.value.kind === "array" ? h.value : undefined;
  });
}

/**
 * Removes our handlers from one event's groups, and the groups they leave empty; the event array
 * itself stays. Edits one at a time, from the last backwards, so earlier offsets stay valid.
 */
function removeOursFromEvent(text: string, event: string, ours: Ours): { text: string; removed: number } {
  let removed = 0;
  for (;;) {
    const hooks = hooksOf(text);
    const array = hooks === undefined ? undefined : eventArray(hooks, event);
    if (array === undefined) return { text, removed };
    const target = findLastOurs(text, array, ours);
    if (target === undefined) return { text, removed };
    const { groupIndex, handlers, handlerIndex } = target;
    text =
      handlers.items.length === 1
        ? removeChild(text, array, groupIndex)
        : removeChild(text, handlers, handlerIndex);
    removed++;
  }
}

function findLastOurs(
  text: string,
  array: JsonArray,
  ours: Ours,
): { groupIndex: number; handlers: JsonArray; handlerIndex: number } | undefined {
  const arrays = handlerArrays(array);
  for (let g = arrays.length - 1; g >= 0; g--) {
    const handlers = arrays[g];
    if (handlers === undefined) continue;
    for (let h = handlers.items.length - 1; h >= 0; h--)
      if (ours(nodeValue(text, handlers.items[h] as JsonNode)))
        return { groupIndex: g, handlers, handlerIndex: h };
  }
  return undefined;
}

/** Our groups of an event, as values, and whether every handler of each is ours. */
function oursIn(text: string, array: JsonArray, ours: Ours): { groups: unknown[]; mixed: boolean } {
  const groups: unknown[] = [];
  let mixed = false;
  handlerArrays(array).forEach((handlers, g) => {
    if (handlers === undefined) return;
    const mine = handlers.items.filter((h) => ours(nodeValue(text, h)));
    if (mine.length === 0) return;
    if (mine.length !== handlers.items.length) mixed = true;
    groups.push(nodeValue(text, array.items[g] as JsonNode));
  });
  return { groups, mixed };
}

/** JSON with keys sorted at every depth: equal for equal values whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/**
 * `text` (undefined: no file yet) with `entries` merged in. An event already holding exactly our
 * group is left alone; one holding ours in any other form has it replaced; ours under an event no
 * longer wanted is removed.
 */
export function mergeEntries(text: string | undefined, entries: readonly Entry[], ours: Ours): MergeResult {
  const original = text ?? EMPTY_FILE;
  const style: JsonStyle = text === undefined ? NEW_FILE_STYLE : detectStyle(text);
  let current = original;
  const wanted = new Map(entries.map((e) => [e.event, canonical(e.group)]));
  const missing: Entry[] = [];
  const hooks0 = hooksOf(current);
  const present = hooks0 === undefined ? [] : hooks0.members.map((m) => m.key);
  for (const event of new Set([...present, ...wanted.keys()])) {
    const hooks = hooksOf(current);
    const array = hooks === undefined ? undefined : eventArray(hooks, event);
    const want = wanted.get(event);
    if (array !== undefined) {
      const { groups, mixed } = oursIn(current, array, ours);
      const exact = !mixed && groups.length === 1 && canonical(groups[0]) === want;
      if (exact) continue;
      current = removeOursFromEvent(current, event, ours).text;
    }
    if (want !== undefined) missing.push(entries.find((e) => e.event === event) as Entry);
  }
  const created: string[] = [];
  const hooks = hooksOf(current);
  if (hooks === undefined) {
    if (missing.length > 0) {
      current = appendMember(
        current,
        root(current),
        "hooks",
        Object.fromEntries(missing.map((e) => [e.event, [e.group]])),
        style,
      );
      created.push("hooks", ...missing.map((e) => `hooks.${e.event}`));
    }
  } else
    for (const e of missing) {
      const h = hooksOf(current) as JsonObject;
      const array = eventArray(h, e.event);
      if (array === undefined) {
        current = appendMember(current, h, e.event, [e.group], style);
        created.push(`hooks.${e.event}`);
      } else current = appendItem(current, array, e.group, style);
    }
  return { text: current, changed: current !== original || text === undefined, created };
}

/**
 * `text` without our handlers. Event arrays left empty are removed when `created` names them (install
 * made them), and `hooks` when it is then empty and `created` names it; with no record of what install
 * created (`created` undefined), whatever our removal left empty goes.
 */
export function removeEntries(
  text: string,
  ours: Ours,
  created: readonly string[] | undefined,
): RemoveResult {
  let current = text;
  let removed = 0;
  const hooks0 = hooksOf(current);
  if (hooks0 === undefined) return { text, changed: false, removed: 0 };
  const emptied: string[] = [];
  for (const event of new Set(hooks0.members.map((m) => m.key))) {
    const before = eventArray(hooksOf(current) as JsonObject, event);
    if (before === undefined) continue;
    const r = removeOursFromEvent(current, event, ours);
    current = r.text;
    removed += r.removed;
    const after = eventArray(hooksOf(current) as JsonObject, event);
    if (r.removed > 0 && after !== undefined && after.items.length === 0) emptied.push(event);
  }
  const mayRemove = (key: string) => (created === undefined ? true : created.includes(key));
  for (const event of emptied) {
    if (!mayRemove(`hooks.${event}`)) continue;
    const h = hooksOf(current) as JsonObject;
    const index = h.members.findLastIndex((m) => m.key === event);
    current = removeChild(current, h, index);
  }
  const h = hooksOf(current);
  if (removed > 0 && h !== undefined && h.members.length === 0 && mayRemove("hooks")) {
    const r = root(current);
    current = removeChild(
      current,
      r,
      r.members.findLastIndex((m) => m.key === "hooks"),
    );
  }
  return { text: current, changed: current !== text, removed };
}

/** Whether a settings text (after `removeEntries`) holds nothing: a file install created can then go. */
export const isEmptySettings = (text: string): boolean => root(text).members.length === 0;
