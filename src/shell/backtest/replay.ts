/**
 * One backtest over the store (SPEC-0029 REQ-8): the rule file compiled with the load checks, then the
 * journal read page by page in seq order, each row fed to the rule's windows and, when it was admitted
 * inside the stretch, through the core's `BacktestFold`. The week before the stretch only fills the
 * windows, so they look back into older rows exactly as they did live. Nothing is written: the caller
 * hands this the journal of a read-only store (the daemon's backtest worker, or the CLI when the daemon
 * is down).
 *
 * Everything in and out is plain data, so a worker thread can take the request and post the parts.
 */
import {
  type BacktestCounts,
  type BacktestFire,
  BacktestFold,
  type ReplayedFire,
  replayedFire,
} from "../../core/backtest.js";
import { compileRule } from "../../core/compile-rule.js";
import { enforceEntries, entriesEnforce } from "../../core/enforce-entry.js";
import type { JournalRow } from "../../core/journal.js";
import { EVENT_KINDS, type EventKind } from "../../core/kinds.js";
import { loadRuleFile } from "../../core/load-rule.js";
import type { RuleSpec } from "../../core/rule-file.js";
import { type ActiveRule, activeRule, type RuleSource } from "../../core/rule-set.js";
import type { CoreState } from "../../core/state.js";
import { MAX_WINDOW_MS } from "../../core/window.js";
import {
  literalKeys,
  type SelectorShape,
  selectorShapes,
  shapesIndex,
  shapeTypes,
  WindowFeed,
} from "../../core/window-index.js";
import { RuleRefusedError } from "../errors.js";
import {
  type Decodable,
  type IndexedColumn,
  isIndexedColumn,
  type ReplaySource,
} from "../store/journal-table.js";

export interface BacktestRequest {
  /** The file as messages name it (`rules/churn.toml`), and its text. */
  readonly file: string;
  readonly text: string;
  /** The stretch: rows admitted after `nowMs - sinceMs`, up to the last row when the replay starts. */
  readonly sinceMs: number;
  readonly nowMs: number;
  /** `[memory.rules]` as in force: the effective levels and modes the fires are given. */
  /** `[memory.rules] enforce` entries: names, and `NAME@HASH` pins (`core/enforce-entry.ts`). */
  readonly enforce: readonly string[];
  readonly shadowPeriod: number;
  readonly shadows: CoreState["shadows"];
  /** The rules in force by name, so a file identical to one keeps its source (a starter skips shadow). */
  readonly loaded: readonly { readonly name: string; readonly hash: string; readonly source: RuleSource }[];
  /** REQ-6's limit unless a test injects a lower one, as the rule set in force does. */
  readonly costLimit?: number;
  /**
   * With `--diff`: the loaded rule of the file's name, replayed beside the file in the same pass over
   * the same rows, so the fires of the two versions compare row for row.
   */
  readonly against?: { readonly spec: RuleSpec; readonly source: RuleSource };
}

export interface BacktestStart {
  readonly rule: string;
  readonly hash: string;
  /** First and last rows of the stretch (0 and 0 when it is empty). */
  readonly fromSeq: number;
  readonly toSeq: number;
  /** The loaded version replayed beside it (`against`), when there is one. */
  readonly loaded?: { readonly hash: string; readonly source: RuleSource };
}

/** The loaded version's side of a `--diff` backtest, over the same rows. */
export interface LoadedReplay {
  readonly hash: string;
  readonly source: RuleSource;
  readonly fires: readonly ReplayedFire[];
  readonly counts: BacktestCounts;
}

/** One backtest's result, from the daemon or from the store. */
export interface BacktestReport {
  readonly start: BacktestStart;
  readonly sinceMs: number;
  readonly fires: readonly ReplayedFire[];
  readonly counts: BacktestCounts;
  /** Where it ran: the daemon, or the store read directly. */
  readonly ranOn: "daemon" | "store";
  /** With `--diff`, the loaded rule of the same name over the same rows; absent when none has it. */
  readonly loaded?: LoadedReplay;
}

export interface BacktestSink {
  start(start: BacktestStart): void;
  /** `loaded`: these are the loaded version's fires, not the file's. */
  fires(fires: readonly ReplayedFire[], loaded: boolean): void;
  /** `loaded`: the loaded version's counts, with `--diff` and a loaded rule of the name. */
  summary(counts: BacktestCounts, loaded: BacktestCounts | undefined): void;
}

/**
 * Compiles the file exactly as a rule-set load would, with the enforce list and source in force; a file
 * that fails a load check (`RuleRefusedError`) would be disabled with that reason, so nothing replays.
 */
export function backtestRule(request: BacktestRequest): ActiveRule {
  const load = loadRuleFile(request.file, request.text);
  if (!load.ok) throw new RuleRefusedError(load.problem);
  const { name } = load.rule.spec;
  const same = request.loaded.find((r) => r.name === name && r.hash === load.rule.hash);
  return activeRule(
    load.rule,
    // A file that is not the rule in force is what a policy repo would bring: it shadows as usual.
    same?.source ?? { kind: "policy", repo: "backtest" },
    entriesEnforce(enforceEntries(request.enforce).get(name), load.rule.hash),
  );
}

/** The loaded version `against` names, compiled again from its spec as the rule set compiled it. */
function againstRule(request: BacktestRequest): ActiveRule | undefined {
  const against = request.against;
  if (against === undefined) return undefined;
  const load = compileRule(against.spec);
  // It compiled when the rule set loaded it, in this same build.
  if (!load.ok)
    throw new Error(`the loaded rule ${against.spec.name} no longer compiles: ${load.problem.message}`);
  return activeRule(load.rule, against.source, request.enforce.includes(against.spec.name));
}

/** Fires go out in batches of this many, so a noisy rule streams rather than arriving at the end. */
const FIRE_BATCH = 256;

/** Past this many decisions remembered, a replay forgets them and decides again. */
const MAX_DECISIONS = 4_096;

/** Decisions by kind, then type, then each screened column's value. */
type Decisions = Map<string | boolean | undefined, Decisions | boolean>;

/** The next level of `node` under `key`, made on first use. */
function child(node: Decisions, key: string | boolean | undefined): Decisions {
  let next = node.get(key) as Decisions | undefined;
  if (next === undefined) {
    next = new Map();
    node.set(key, next);
  }
  return next;
}

/** The indexed columns worth reading before a row is decoded: those the guards and literal selectors test. */
function screenColumns(folds: readonly BacktestFold[], shapes: readonly SelectorShape[]): IndexedColumn[] {
  const wanted = new Set<string>();
  for (const kind of EVENT_KINDS) {
    for (const fold of folds) for (const f of fold.guardedFields(kind)) wanted.add(f);
    for (const k of literalKeys(shapes, kind)) wanted.add(k);
  }
  return [...wanted].filter(isIndexedColumn).sort();
}

/** One version's fold and the batch of its fires not sent yet. */
class Side {
  private batch: ReplayedFire[] = [];

  constructor(
    readonly fold: BacktestFold,
    private readonly send: (fires: readonly ReplayedFire[]) => void,
  ) {}

  emit(fires: readonly BacktestFire[], flush = false): void {
    for (const f of fires) this.batch.push(replayedFire(f));
    if (this.batch.length >= FIRE_BATCH || (flush && this.batch.length > 0)) {
      this.send(this.batch);
      this.batch = [];
    }
  }

  finish(): BacktestCounts {
    const end = this.fold.finish();
    this.emit(end.fires, true);
    return end.counts;
  }
}

/** How the replay screens rows before decoding them: `JournalTable.rowsInRangeTyped`'s arguments. */
export interface ReplayScreen {
  readonly readsEvent: (
    kind: EventKind,
    type: string,
    values: readonly (string | boolean | undefined)[],
  ) => boolean;
  readonly columns: readonly IndexedColumn[];
  readonly decodable: Decodable;
}

/**
 * A journal read a replay streams from: SQLite's `JournalTable` answers at once, PostgreSQL's snapshot
 * (`../store/pg/pg-journal-reads.ts`) asynchronously, its rows fetched a page at a time.
 */
export interface StreamedReplaySource {
  firstAdmittedAfter(at: number): Promise<number | undefined> | number | undefined;
  last(): Promise<{ readonly seq: number }> | { readonly seq: number };
  rowsInRangeTyped(
    fromSeq: number,
    toSeq: number,
    readsEvent: ReplayScreen["readsEvent"],
    columns: readonly IndexedColumn[],
    decodable: Decodable,
  ): AsyncIterable<JournalRow> | Iterable<JournalRow>;
}

/**
 * One replay's state between the reads, whatever drives it: the versions' folds, the windows' feed
 * and the screen. `replay` drives it over SQLite's synchronous reads, `replayStreamed` over an
 * asynchronous source; both make the same calls in the same order, so the fires are the same.
 */
class Replayer {
  private readonly active: ActiveRule;
  private readonly against: ActiveRule | undefined;
  private readonly file: Side;
  private readonly loaded: Side | undefined;
  private readonly sides: readonly Side[];
  private feed: WindowFeed | undefined;
  /** Rows admitted after this are in the stretch; the week before it only fills the windows. */
  readonly stretchAfter: number;
  readonly windowAfter: number;

  constructor(
    request: BacktestRequest,
    private readonly sink: BacktestSink,
  ) {
    this.active = backtestRule(request);
    this.against = againstRule(request);
    this.stretchAfter = request.nowMs - request.sinceMs;
    this.windowAfter = this.stretchAfter - MAX_WINDOW_MS;
    const options = {
      shadowPeriod: request.shadowPeriod,
      shadows: request.shadows,
      ...(request.costLimit === undefined ? {} : { costLimit: request.costLimit }),
    };
    // The file's version, and with --diff the loaded one: both step on every row read, in one pass.
    this.file = new Side(new BacktestFold(this.active, options), (fires) => sink.fires(fires, false));
    this.loaded =
      this.against === undefined
        ? undefined
        : new Side(new BacktestFold(this.against, options), (fires) => sink.fires(fires, true));
    this.sides = this.loaded === undefined ? [this.file] : [this.file, this.loaded];
  }

  /** Sends the start; the screen to read the rows with, or undefined when the stretch is empty. */
  start(from: number | undefined, last: number): ReplayScreen | undefined {
    const { active, against } = this;
    this.sink.start({
      rule: active.rule.spec.name,
      hash: active.rule.hash,
      fromSeq: from ?? 0,
      toSeq: from === undefined ? 0 : last,
      ...(against === undefined ? {} : { loaded: { hash: against.rule.hash, source: against.source } }),
    });
    if (from === undefined) return undefined;
    const folds = this.sides.map((side) => side.fold);
    const shapes = selectorShapes(against === undefined ? [active.rule] : [active.rule, against.rule]);
    this.feed = new WindowFeed(shapes);
    // Only rows the windows index or a version may read are decoded: the kind, the type and the
    // indexed columns the guards or the windows' literal selectors test decide it, from the columns.
    const columns = screenColumns(folds, shapes);
    // Decided once per kind, type and column values, remembered in nested maps, one level for each;
    // a column of many values (a literal `run`) could grow them a month long, so past a bound they
    // start again.
    let decided: Decisions = new Map();
    let remembered = 0;
    const readsEvent = (
      kind: EventKind,
      type: string,
      values: readonly (string | boolean | undefined)[],
    ): boolean => {
      // The path is kind, type, then each value; the last of them keys the decision itself.
      let node = child(decided, kind);
      let leafKey: string | boolean | undefined = type;
      for (let i = 0; i < values.length; i++) {
        node = child(node, leafKey);
        leafKey = values[i];
      }
      let reads = node.get(leafKey) as boolean | undefined;
      if (reads === undefined) {
        if (++remembered > MAX_DECISIONS) {
          decided = new Map();
          remembered = 0;
        }
        const known = (f: string) => values[columns.indexOf(f as IndexedColumn)];
        reads =
          folds.some((fold) => fold.readsEvent(kind, type, known)) || shapesIndex(shapes, kind, type, known);
        node.set(leafKey, reads);
      }
      return reads;
    };
    // The types a version or the windows may read, by kind: no other row's event text is read at all.
    const decodable = new Map(
      EVENT_KINDS.map((kind): [EventKind, ReadonlySet<string> | "any"] => {
        const read = [...folds.map((fold) => fold.typesRead(kind)), shapeTypes(shapes, kind)];
        const types = new Set<string>();
        for (const r of read) {
          if (r === "any") return [kind, "any"];
          for (const t of r) types.add(t);
        }
        return [kind, types];
      }),
    );
    return { readsEvent, columns, decodable };
  }

  /** The next row in seq order: into the windows, and through the folds when it is in the stretch. */
  row(row: JournalRow): void {
    const feed = this.feed as WindowFeed;
    feed.add(row);
    if (row.at > this.stretchAfter) {
      const window = feed.readerAt(row.at);
      for (const side of this.sides) side.emit(side.fold.step(row, window));
    }
  }

  finish(): void {
    this.sink.summary(this.file.finish(), this.loaded?.finish());
  }
}

export function replay(journal: ReplaySource, request: BacktestRequest, sink: BacktestSink): void {
  const replayer = new Replayer(request, sink);
  const from = journal.firstAdmittedAfter(replayer.stretchAfter);
  const last = journal.last().seq;
  const screen = replayer.start(from, last);
  if (from !== undefined && screen !== undefined) {
    const windowFrom = journal.firstAdmittedAfter(replayer.windowAfter) ?? from;
    const { readsEvent, columns, decodable } = screen;
    for (const row of journal.rowsInRangeTyped(windowFrom, last, readsEvent, columns, decodable))
      replayer.row(row);
  }
  replayer.finish();
}

/**
 * `replay` over a source that answers asynchronously (PostgreSQL's, `replay-on-pg.ts`): the same
 * reads in the same order, the rows folded as they stream in.
 */
export async function replayStreamed(
  journal: StreamedReplaySource,
  request: BacktestRequest,
  sink: BacktestSink,
): Promise<void> {
  const replayer = new Replayer(request, sink);
  const from = await journal.firstAdmittedAfter(replayer.stretchAfter);
  const last = (await journal.last()).seq;
  const screen = replayer.start(from, last);
  if (from !== undefined && screen !== undefined) {
    const windowFrom = (await journal.firstAdmittedAfter(replayer.windowAfter)) ?? from;
    const { readsEvent, columns, decodable } = screen;
    for await (const row of journal.rowsInRangeTyped(windowFrom, last, readsEvent, columns, decodable))
      replayer.row(row);
  }
  replayer.finish();
}
