/**
 * The operator's console: the six views, the overlays (help, an explanation or detail, a node's
 * annotations, the clear-hold dialog), the filter and the keys. Keys as k9s and lazygit have them:
 * `?` help, `/` filter, Esc back, Tab and 1-6 switch views, j/k and arrows move, Enter drills in,
 * `c` clears a hold after a y/n, `q` quits. Every line is cut to the terminal's width, and the
 * selected row is marked with `>` as well as shown inverse, so no meaning rests on colour alone.
 *
 * The UI state lives in a ref that each key updates at once and the render reads: keys typed faster
 * than a frame (or sent together, as tmux send-keys does) each see the state the one before left.
 */
import { Box, type Key, Text, useApp, useInput } from "ink";
import { useReducer, useRef, useSyncExternalStore } from "react";
import type { ConsoleData, ConsoleSnapshot } from "../console-data.js";
import type { TuiText } from "../text.js";
import { annotationsView, nodeHeader, nodeRows } from "../views/annotations.js";
import { feedView } from "../views/feed.js";
import { holdsView } from "../views/holds.js";
import { proposalsView } from "../views/proposals.js";
import { rulesView } from "../views/rules.js";
import { shadowView } from "../views/shadow.js";
import type { Drill, Row, ViewSpec } from "../views/view.js";
import { HELP_LINES } from "./help.js";
import { StatusLine } from "./status-line.js";

export const VIEWS: readonly ViewSpec[] = [
  feedView,
  shadowView,
  holdsView,
  proposalsView,
  annotationsView,
  rulesView,
];

type Overlay =
  | { readonly kind: "help" }
  | {
      readonly kind: "lines";
      readonly title: string;
      readonly lines: readonly string[];
      readonly back?: Overlay;
    }
  | { readonly kind: "node"; readonly node: string; readonly rows: readonly Row[] }
  | { readonly kind: "confirm"; readonly harness: string; readonly rule: string };

interface UiState {
  readonly view: number;
  readonly cursors: readonly number[];
  readonly filters: readonly string[];
  readonly editing: boolean;
  readonly overlay: Overlay | undefined;
  readonly overlayCursor: number;
  readonly overlayFilter: string;
  readonly message: string;
}

const INITIAL: UiState = {
  view: 0,
  cursors: VIEWS.map(() => 0),
  filters: VIEWS.map(() => ""),
  editing: false,
  overlay: undefined,
  overlayCursor: 0,
  overlayFilter: "",
  message: "",
};

export interface AppProps {
  readonly data: ConsoleData;
  readonly text: TuiText;
  readonly width: number;
  readonly height: number;
  /** False under NO_COLOR: no colour at all. */
  readonly color: boolean;
}

/** The keys the console tells apart. */
type Keys = Pick<
  Key,
  | "return"
  | "escape"
  | "tab"
  | "shift"
  | "backspace"
  | "delete"
  | "upArrow"
  | "downArrow"
  | "pageUp"
  | "pageDown"
  | "ctrl"
  | "meta"
>;

const NO_KEY: Keys = {
  return: false,
  escape: false,
  tab: false,
  shift: false,
  backspace: false,
  delete: false,
  upArrow: false,
  downArrow: false,
  pageUp: false,
  pageDown: false,
  ctrl: false,
  meta: false,
};

/** One character of a string typed at once, as the key it is. */
const keyOf = (c: string): Keys => ({
  ...NO_KEY,
  return: c === "\r" || c === "\n",
  tab: c === "\t",
  backspace: c === "\u007f" || c === "\b",
});

const matches = (filter: string) => (r: Row) =>
  filter === "" || r.text.toLowerCase().includes(filter.toLowerCase());

const at = <T,>(xs: readonly T[], i: number, x: T): T[] => xs.map((y, j) => (j === i ? x : y));

/** The rows a screen shows: how many, one by its index, a stretch of them. */
interface Rows {
  readonly length: number;
  at(i: number): Row | undefined;
  range(from: number, to: number): readonly Row[];
}

const listed = (rows: readonly Row[]): Rows => ({
  length: rows.length,
  at: (i) => rows[i],
  range: (from, to) => rows.slice(from, to),
});

/** Each snapshot's rows per view and filter, built once however many keys and renders ask. */
const built = new WeakMap<ConsoleSnapshot, Map<string, readonly Row[]>>();

/** The columns before a row's text: the cursor's mark and a space. */
const MARK = 2;

/** The rows on screen: the overlay's, or the current view's, filtered, laid out `screen` wide. */
function rowsOf(u: UiState, s: ConsoleSnapshot, text: TuiText, screen: number): Rows {
  const o = u.overlay;
  if (o?.kind === "node") return listed(o.rows.filter(matches(u.overlayFilter)));
  if (o?.kind === "lines") return listed(o.lines.map((l, i) => ({ id: String(i), text: l })));
  if (o?.kind === "help") return listed(HELP_LINES.map((l, i) => ({ id: String(i), text: l })));
  const spec = VIEWS[u.view] as ViewSpec;
  const filter = u.filters[u.view] ?? "";
  const { lazy } = spec;
  if (filter === "" && lazy !== undefined)
    return {
      length: lazy.size(s),
      at: (i) => lazy.slice(s, text, i, i + 1, screen)[0],
      range: (from, to) => lazy.slice(s, text, from, to, screen),
    };
  const key = `${u.view}\u0000${filter}\u0000${screen}`;
  const cache = built.get(s) ?? new Map<string, readonly Row[]>();
  built.set(s, cache);
  let rows = cache.get(key);
  if (rows === undefined) {
    rows = spec.rows(s, text, screen).filter(matches(filter));
    cache.set(key, rows);
  }
  return listed(rows);
}

const inOverlay = (u: UiState) => u.overlay !== undefined && u.overlay.kind !== "confirm";

const cursorOf = (u: UiState, rows: Rows) =>
  Math.min(inOverlay(u) ? u.overlayCursor : (u.cursors[u.view] ?? 0), Math.max(0, rows.length - 1));

/** The console's UI state, and the ways a key or a reply changes it. */
interface Ui {
  readonly current: () => UiState;
  readonly update: (patch: Partial<UiState>) => void;
  readonly say: (message: string) => void;
  readonly open: (overlay: Overlay | undefined) => void;
}

function useUi(): Ui {
  const ui = useRef<UiState>(INITIAL);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const update = (patch: Partial<UiState>) => {
    ui.current = { ...ui.current, ...patch };
    rerender();
  };
  return {
    current: () => ui.current,
    update,
    say: (message) => update({ message }),
    open: (overlay) => update({ overlay, overlayCursor: 0, overlayFilter: "" }),
  };
}

/** What the keys reach: the data, the text, the screen's size, the UI, and the way out. */
interface KeyContext {
  readonly data: ConsoleData;
  readonly text: TuiText;
  readonly width: number;
  readonly bodyHeight: number;
  readonly ui: Ui;
  readonly exit: () => void;
}

/** Enter on a row: its lines, the fire's explanation or the node's annotations, over the screen. */
function drill(c: KeyContext, d: Drill, back: Overlay | undefined) {
  const { data, text, ui } = c;
  const p = text.printable;
  const from = back === undefined ? {} : { back };
  if (d.kind === "lines") return ui.open({ kind: "lines", title: d.title, lines: d.lines, ...from });
  if (d.kind === "fire") {
    ui.say(`explaining ${p(d.fireId)}…`);
    data.explain(d.fireId).then(
      (x) => {
        ui.update({ message: "" });
        ui.open({
          kind: "lines",
          title: `explanation of ${p(d.fireId)} (harness rules explain ${p(d.fireId)})`,
          lines: text.explanation(x).map((l) => p(l)),
          ...from,
        });
      },
      (e: unknown) => ui.say(`cannot explain ${p(d.fireId)}: ${p((e as Error).message)}`),
    );
    return;
  }
  ui.say(`reading ${p(d.node)}…`);
  data.annotationsOf(d.node).then(
    (as) => {
      ui.update({ message: "" });
      ui.open({ kind: "node", node: d.node, rows: nodeRows(as, text, c.width - MARK) });
    },
    (e: unknown) => ui.say(`cannot read ${p(d.node)}: ${p((e as Error).message)}`),
  );
}

function clear(c: KeyContext, harness: string, rule: string): void {
  const p = c.text.printable;
  c.ui.say(`clearing ${p(harness)}'s hold by ${p(rule)}…`);
  c.data.clearHold(harness, rule).then(
    (lines) => c.ui.say(lines.map((l) => p(l)).join("; ")),
    (e: unknown) => c.ui.say(`ClearHold failed: ${p((e as Error).message)}`),
  );
}

/** A key while the filter is typed: it edits the node list's filter in that overlay, else the view's. */
function filterKey(ui: Ui, u: UiState, input: string, key: Keys) {
  const node = u.overlay?.kind === "node";
  const current = node ? u.overlayFilter : (u.filters[u.view] ?? "");
  const set = (f: string) => ui.update(node ? { overlayFilter: f } : { filters: at(u.filters, u.view, f) });
  if (key.escape) {
    set("");
    ui.update({ editing: false });
  } else if (key.return) ui.update({ editing: false });
  else if (key.backspace || key.delete) set(current.slice(0, -1));
  else if (input !== "" && !key.ctrl && !key.meta) set(current + input);
}

/** A key while the clear-hold dialog asks: y clears, n or Esc cancels, any other waits. */
function confirmKey(c: KeyContext, o: Extract<Overlay, { kind: "confirm" }>, input: string, key: Keys) {
  if (input === "y" || input === "Y") {
    c.ui.open(undefined);
    clear(c, o.harness, o.rule);
  } else if (input === "n" || input === "N" || key.escape) {
    c.ui.open(undefined);
    c.ui.say("clear cancelled");
  }
}

function handleKey(c: KeyContext, input: string, key: Keys) {
  const { ui } = c;
  const u = ui.current();
  if (u.editing) return filterKey(ui, u, input, key);
  if (u.overlay?.kind === "confirm") return confirmKey(c, u.overlay, input, key);
  if (input === "q") return c.exit();
  if (input === "?") return ui.open(u.overlay?.kind === "help" ? undefined : { kind: "help" });
  if (key.escape) {
    if (u.overlay?.kind === "lines" && u.overlay.back !== undefined)
      return ui.update({ overlay: u.overlay.back, overlayCursor: 0 });
    if (u.overlay !== undefined) return ui.open(undefined);
    return ui.update({ message: "", filters: at(u.filters, u.view, "") });
  }
  if (input === "/" && (u.overlay === undefined || u.overlay.kind === "node"))
    return ui.update({ editing: true });
  const n = Number.parseInt(input, 10);
  if (input.length === 1 && n >= 1 && n <= VIEWS.length)
    return ui.update({ view: n - 1, overlay: undefined, message: "" });
  if (key.tab)
    return ui.update({
      view: (u.view + (key.shift ? VIEWS.length - 1 : 1)) % VIEWS.length,
      overlay: undefined,
      message: "",
    });
  rowKey(c, u, input, key);
}

/** A key on the rows: move the cursor, drill into the row, or ask to clear its hold. */
function rowKey(c: KeyContext, u: UiState, input: string, key: Keys) {
  const { data, ui } = c;
  const p = c.text.printable;
  const rows = rowsOf(u, data.snapshot(), c.text, c.width - MARK);
  const cursor = cursorOf(u, rows);
  const move = (n: number) => {
    const to = Math.max(0, Math.min(n, rows.length - 1));
    if (inOverlay(u)) return ui.update({ overlayCursor: to });
    ui.update({ cursors: at(u.cursors, u.view, to) });
    if (VIEWS[u.view] === annotationsView && to >= rows.length - 1 && data.snapshot().nodesTruncated)
      data.moreNodes().catch((e: unknown) => ui.say(`cannot read more nodes: ${p((e as Error).message)}`));
  };
  if (input === "j" || key.downArrow) return move(cursor + 1);
  if (input === "k" || key.upArrow) return move(cursor - 1);
  if (key.pageDown) return move(cursor + c.bodyHeight);
  if (key.pageUp) return move(cursor - c.bodyHeight);
  if (input === "g") return move(0);
  if (input === "G") return move(rows.length - 1);
  const row = rows.at(cursor);
  if (key.return && row?.drill !== undefined) return drill(c, row.drill, u.overlay);
  if (input === "c" && u.overlay === undefined && VIEWS[u.view] === holdsView) {
    const readOnly = data.snapshot().readOnly;
    if (readOnly !== undefined) return ui.say(`read-only, cannot clear: ${p(readOnly)}`);
    if (row?.hold === undefined) return ui.say("no hold selected");
    return ui.open({ kind: "confirm", harness: row.hold.harness, rule: row.hold.rule });
  }
}

/** The screen's words around the rows: the title line, the filter, the bottom line, the empty text. */
function frameText(u: UiState, rows: Rows, width: number, p: (s: string) => string) {
  const spec = VIEWS[u.view] as ViewSpec;
  const o = u.overlay;
  const title =
    o?.kind === "help"
      ? "help: every key"
      : o?.kind === "lines"
        ? `${o.title}  (Esc: back)`
        : o?.kind === "node"
          ? `annotations of ${p(o.node)}  (Enter: explanation, Esc: back)`
          : // A table's header stands over its columns, past the cursor's mark.
            `${" ".repeat(MARK)}${spec.header(width - MARK)}`;
  const filter = o?.kind === "node" ? u.overlayFilter : o === undefined ? (u.filters[u.view] ?? "") : "";
  const bottom =
    o?.kind === "confirm"
      ? `y: clear, n/Esc: cancel | clear the hold on ${p(o.harness)} by rule ${p(o.rule)}?`
      : u.editing
        ? `/${p(filter)}_  (Enter: keep, Esc: clear)`
        : u.message !== ""
          ? u.message
          : `${filter === "" ? "" : `filter: ${p(filter)} (Esc clears) | `}? help  / filter  Enter open  q quit`;
  const empty =
    rows.length === 0
      ? o?.kind === "node"
        ? "no annotations"
        : filter === ""
          ? spec.empty
          : "nothing matches the filter"
      : undefined;
  return { title, bottom, empty };
}

export function App({ data, text, width, height, color }: AppProps) {
  const snapshot = useSyncExternalStore(data.subscribe, data.snapshot);
  const { exit } = useApp();
  const ui = useUi();
  const bodyHeight = Math.max(1, height - 4);
  const c: KeyContext = { data, text, width, bodyHeight, ui, exit };
  useInput((input, key) => {
    if (input.length > 1 && !key.meta && !key.ctrl) for (const ch of input) handleKey(c, ch, keyOf(ch));
    else handleKey(c, input, key);
  });

  const u = ui.current();
  const rows = rowsOf(u, snapshot, text, width - MARK);
  const cursor = cursorOf(u, rows);
  const o = u.overlay;
  const top = Math.max(0, Math.min(cursor - Math.floor(bodyHeight / 2), rows.length - bodyHeight));
  const tabs = VIEWS.map((v, i) => (i === u.view ? `[${i + 1} ${v.name}]` : ` ${i + 1} ${v.name} `)).join("");
  const { title, bottom, empty } = frameText(u, rows, width, text.printable);
  const node = o?.kind === "node";
  const listHeight = bodyHeight - (node ? 1 : 0);
  const visible = rows.range(top, top + listHeight);

  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text wrap="truncate" bold>
        {tabs}
      </Text>
      {node ? (
        <Text wrap="truncate" bold>
          {title}
        </Text>
      ) : null}
      <Text wrap="truncate" underline>
        {node ? `${" ".repeat(MARK)}${nodeHeader(width - MARK)}` : title}
      </Text>
      <Box flexDirection="column" height={listHeight}>
        {empty !== undefined ? <Text wrap="truncate">{`  ${empty}`}</Text> : null}
        {visible.map((r, i) => {
          const selected = o?.kind !== "help" && top + i === cursor;
          return (
            <Text key={r.id} wrap="truncate" inverse={selected}>
              {`${selected ? ">" : " "} ${r.text}`}
            </Text>
          );
        })}
      </Box>
      <Text wrap="truncate" {...(color && o?.kind === "confirm" ? { color: "yellow" } : {})}>
        {bottom}
      </Text>
      <StatusLine snapshot={snapshot} color={color} />
    </Box>
  );
}
