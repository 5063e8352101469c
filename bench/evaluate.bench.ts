/**
 * `npm run bench:evaluate`: evaluate() throughput on one core, over a synthetic journal of 1,000,000
 * rows (mostly tool rows, some opened/closed, graph events, a tick a minute) at 50,000 rows a day,
 * through the starter pack plus 50 generated rules each reaching a primitive call on every row of its
 * kind; and the memory the window index holds at 7 days of rows.
 *
 * Two builds run side by side in this one process: this checkout and a baseline commit (`BASELINE`,
 * default b646156; `BASELINE=none` runs this checkout alone), built by `baseline-build.ts` into a
 * temporary directory. They take turns over chunks of the same rows, so a busy neighbour slows both
 * alike, and each is timed in CPU-seconds of this thread.
 *
 * Then where a row's time goes, over the first `BREAKDOWN_ROWS` rows, for both builds, by replacing
 * parts with tapes recorded from the same build's real run (so every variant takes the same paths and
 * makes the same fires): the window reader by one answering from a tape (the difference is the reads
 * made inside the loop), every rule's program by one answering its recorded verdict (the difference is
 * CEL, with the primitives' call plumbing on CEL's side), and the loop with the window feed alone. A
 * read's isolated cost is the same recorded calls made straight to the same fed reader, row by row,
 * with nothing else in the loop, less the same walk of the recorded calls answering from the tape.
 *
 * Env: ROWS (default 1,000,000), BREAKDOWN_ROWS (default 150,000; 0 skips), BASELINE, CHUNK.
 */

import { execFileSync } from "node:child_process";
import type { LoadedRule, RuleLoad } from "../src/core/compile-rule.js";
import type { evaluate as EvaluateFn } from "../src/core/evaluate.js";
import type { JournalRow } from "../src/core/journal.js";
import type { loadRuleFile as LoadRuleFileFn } from "../src/core/load-rule.js";
import type {
  ActiveRule,
  assembleRuleSet as AssembleFn,
  RuleSet,
  ruleSetOf as RuleSetOfFn,
} from "../src/core/rule-set.js";
import type { loadStarterPack as StarterFn } from "../src/core/starter-pack.js";
import type { StateAccumulator as AccumulatorClass, CoreState } from "../src/core/state.js";
import type { IndexedField, Selector, WindowReader } from "../src/core/window.js";
import type {
  SelectorShape,
  selectorShapes as ShapesFn,
  WindowFeed as WindowFeedClass,
  WindowIndex as WindowIndexClass,
} from "../src/core/window-index.js";
import { buildCommit, CANDIDATE_DIR, importFrom } from "./baseline-build.js";

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const BREAKDOWN_ROWS = Math.min(ROWS, Number(process.env.BREAKDOWN_ROWS ?? 150_000));
const BASELINE = process.env.BASELINE ?? "b646156";
const CHUNK = Number(process.env.CHUNK ?? 10_000);
const PER_DAY = 50_000;
const STEP = 86_400_000 / PER_DAY;
const T0 = Date.parse("2026-10-01T00:00:00Z");

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function synthetic(n: number): JournalRow[] {
  const r = random(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const harnesses = Array.from({ length: 20 }, (_, i) => `h${i}`);
  const actions = ["search", "read", "edit", "exec", "verify", "other"];
  const paths = Array.from({ length: 200 }, (_, i) => `internal/pkg${i % 20}/file${i}.go`);
  const rows: JournalRow[] = [];
  let lastTick = T0;
  for (let i = 0; rows.length < n; i++) {
    const at = T0 + i * STEP;
    if (at - lastTick >= 60_000) {
      rows.push({ seq: rows.length + 1, at, kind: "tick", event: { type: "tick" } });
      lastTick = at;
      continue;
    }
    const harness = pick(harnesses);
    const run = `${harness}#${Math.floor(i / 500)}`;
    const roll = r();
    let row: JournalRow;
    if (roll < 0.85) {
      row = {
        seq: 0,
        at,
        kind: "run_event",
        event: {
          type: "tool",
          harness,
          run,
          repo: "forge.example/org/reduit",
          tool: "Bash",
          action: pick(actions),
          is_error: r() < 0.1,
          digest: `d${Math.floor(r() * 50)}`,
          paths: [pick(paths), pick(paths)],
        },
      };
    } else if (roll < 0.9) {
      row = {
        seq: 0,
        at,
        kind: "run_event",
        event: {
          type: r() < 0.5 ? "opened" : "closed",
          harness,
          run,
          outcome: pick(["success", "failed", "budget_exceeded"]),
          cause_digest: `c${Math.floor(r() * 5)}`,
        },
      };
    } else {
      row = {
        seq: 0,
        at,
        kind: "graph_event",
        event: {
          type: pick(["edge_added", "edge_added", "collision_started"]),
          edge: "edited",
          scope: "file",
          repo: "forge.example/org/reduit",
          path: pick(paths),
          harness,
          run,
        },
      };
    }
    rows.push({ ...row, seq: rows.length + 1 });
  }
  return rows;
}

/** 50 rules of the shapes rule authors write; each calls a primitive first, so it runs on every row of its kind. */
function generatedRuleFiles(): [string, string][] {
  const windows = ["10m", "1h", "2h", "24h"];
  const out: [string, string][] = [];
  for (let i = 0; i < 50; i++) {
    const w = windows[i % windows.length];
    const graph = i % 5 === 4;
    const when = graph
      ? `distinct("run", {"type": "edge_added", "repo": event.repo, "path": event.path}, duration("${w}")) >= ${2 + (i % 4)} && event.type == "edge_added"`
      : i % 3 === 0
        ? `count({"type": "tool", "harness": event.harness, "action": event.action}, duration("${w}")) >= ${50 + i} && event.type == "tool"`
        : i % 3 === 1
          ? `exists({"type": "tool", "digest": event.digest, "is_error": true}, duration("${w}")) && event.is_error && event.paths.exists(p, p.startsWith("internal/pkg${i % 20}/"))`
          : `count({"type": "closed", "harness": event.harness, "outcome": "failed"}, duration("${w}")) >= ${2 + (i % 3)} && event.type == "closed"`;
    const text = [
      `name = "gen-${i}"`,
      `description = "generated rule ${i}"`,
      `on = "${graph ? "graph_event" : "run_event"}"`,
      `when = '${when}'`,
      `level = "notify"`,
      `target = "harness"`,
      `message = "{{rule}} {{harness}}"`,
    ].join("\n");
    out.push([`rules/gen-${i}.toml`, text]);
  }
  return out;
}

/** What the bench uses of one build: the same exports at the baseline and here. */
interface Build {
  readonly name: string;
  readonly evaluate: typeof EvaluateFn;
  readonly StateAccumulator: typeof AccumulatorClass;
  readonly emptyState: CoreState;
  readonly WindowFeed: typeof WindowFeedClass;
  readonly WindowIndex: typeof WindowIndexClass;
  readonly ruleSet: RuleSet;
  /** Absent in a build whose rule sets carry no plan (the baseline's). */
  readonly ruleSetOf: typeof RuleSetOfFn | undefined;
  readonly shapes: readonly SelectorShape[];
}

async function loadBuild(name: string, dir: string): Promise<Build> {
  const from = <T>(m: string) => importFrom<T>(dir, m);
  const { evaluate } = await from<{ evaluate: typeof EvaluateFn }>("core/evaluate.js");
  const { loadRuleFile } = await from<{ loadRuleFile: typeof LoadRuleFileFn }>("core/load-rule.js");
  const { assembleRuleSet, ruleSetOf } = await from<{
    assembleRuleSet: typeof AssembleFn;
    ruleSetOf?: typeof RuleSetOfFn;
  }>("core/rule-set.js");
  const { loadStarterPack } = await from<{ loadStarterPack: typeof StarterFn }>("core/starter-pack.js");
  const state = await from<{ StateAccumulator: typeof AccumulatorClass; emptyState: CoreState }>(
    "core/state.js",
  );
  const win = await from<{
    selectorShapes: typeof ShapesFn;
    WindowFeed: typeof WindowFeedClass;
    WindowIndex: typeof WindowIndexClass;
  }>("core/window-index.js");
  const generated: RuleLoad[] = generatedRuleFiles().map(([file, text]) => loadRuleFile(file, text));
  const broken = generated.filter((l) => !l.ok);
  if (broken.length > 0)
    throw new Error(`${name}: generated rules failed to load: ${JSON.stringify(broken[0])}`);
  const ruleSet = assembleRuleSet({
    starter: loadStarterPack(),
    policy: [{ repo: "bench", loads: generated }],
    shadowPeriod: 0,
  });
  return {
    name,
    evaluate,
    StateAccumulator: state.StateAccumulator,
    emptyState: state.emptyState,
    WindowFeed: win.WindowFeed,
    WindowIndex: win.WindowIndex,
    ruleSet,
    ruleSetOf,
    shapes: win.selectorShapes(ruleSet.rules.map((r) => r.rule)),
  };
}

// ---------------------------------------------------------------------------------------------------
// Tapes: one build's real answers over a chunk, recorded by an untimed pass, replayed by the variants.

interface Call {
  readonly fn: 0 | 1 | 2;
  readonly field: IndexedField;
  readonly selector: Selector;
  readonly withinMs: number;
}

interface Tape {
  /** Every read's answer, in the order the loop asks. */
  answers: (number | boolean)[];
  /** Every read, and where each row's reads start (one past the last row: the end). */
  calls: Call[];
  rowStarts: number[];
  /** Per row and rule (row-major): what the rule's program answered. */
  verdicts: unknown[];
}

const emptyTape = (): Tape => ({ answers: [], calls: [], rowStarts: [], verdicts: [] });

/** The methods a build's `evaluate()` may call on a program (the baseline's one, or this checkout's). */
type ProgramMethod = "evaluate" | "evaluateValue";
type Answer = (method: ProgramMethod, vars: never, limit?: number) => unknown;

/**
 * A program whose evaluations by the loop answer through `answer`: one class, so the call site in
 * `evaluate()` sees one shape for all 56 rules, as it does for the real programs. The loop calls one
 * method (`evaluateValue` where the build has it, else `evaluate`); any other call (a plan measuring a
 * type guard) goes to the real program.
 */
class TapedProgram {
  private readonly taped: ProgramMethod;
  constructor(
    private readonly real: Record<ProgramMethod, (v: never, l?: number) => unknown> & {
      checked: unknown;
      estimateCost(): unknown;
    },
    private readonly answer: Answer,
  ) {
    this.taped = typeof real.evaluateValue === "function" ? "evaluateValue" : "evaluate";
  }
  get checked(): unknown {
    return this.real.checked;
  }
  /** The real program's estimate: a plan reads it to decide where its field guards may answer. */
  estimateCost(): unknown {
    return this.real.estimateCost();
  }
  evaluate(vars: never, limit?: number): unknown {
    return this.taped === "evaluate" ? this.answer("evaluate", vars, limit) : this.real.evaluate(vars, limit);
  }
  evaluateValue(vars: never, limit?: number): unknown {
    return this.answer("evaluateValue", vars, limit);
  }
}

function withEvaluate(rule: ActiveRule, answer: Answer): ActiveRule {
  const real = rule.rule.program as unknown as ConstructorParameters<typeof TapedProgram>[0];
  const program = new TapedProgram(real, answer) as unknown as LoadedRule["program"];
  return { ...rule, rule: { ...rule.rule, program } };
}

/** The set with other rules, and (in a build whose sets carry their plan) a plan made for them. */
function withRules(build: Build, rules: readonly ActiveRule[]): RuleSet {
  const { plan: _, ...fields } = build.ruleSet;
  return build.ruleSetOf?.({ ...fields, rules }) ?? ({ ...build.ruleSet, rules } as RuleSet);
}

/** One fold of rows through one build, with its own feed and state. */
class Fold {
  private readonly feed: WindowFeedClass;
  private readonly acc: AccumulatorClass;
  fires = 0;
  cpuUs = 0;
  constructor(
    private readonly build: Build,
    private readonly ruleSet: RuleSet,
    private readonly readerFor: (feed: WindowFeedClass, row: JournalRow) => WindowReader,
  ) {
    this.feed = new build.WindowFeed(build.shapes);
    this.acc = new build.StateAccumulator(build.emptyState);
  }
  /** The loop the live evaluator and a backtest run: feed the row, evaluate it, apply its delta. */
  run(rows: readonly JournalRow[], onRow?: (i: number) => void): void {
    const { evaluate } = this.build;
    const cpu = process.cpuUsage();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as JournalRow;
      onRow?.(i);
      this.feed.add(row);
      const outcome = evaluate(this.ruleSet, row, this.acc.current, this.readerFor(this.feed, row));
      this.acc.apply(outcome.delta);
      this.fires += outcome.fires.length;
    }
    const used = process.cpuUsage(cpu);
    this.cpuUs += used.user + used.system;
  }
}

/**
 * The window feed alone; with a tape, the recorded reads made straight to it, or (`call` false) the
 * same walk of the tape with every answer taken from it instead: the difference between the two is
 * the reads alone, without the tape's bookkeeping.
 */
class FeedOnly {
  private readonly feed: WindowFeedClass;
  cpuUs = 0;
  constructor(build: Build) {
    this.feed = new build.WindowFeed(build.shapes);
  }
  run(rows: readonly JournalRow[], tape?: Tape, call = true): void {
    const cpu = process.cpuUsage();
    let sink = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as JournalRow;
      this.feed.add(row);
      if (tape === undefined) continue;
      const reader = this.feed.readerAt(row.at);
      const end = tape.rowStarts[i + 1] as number;
      for (let c = tape.rowStarts[i] as number; c < end; c++) {
        const { fn, field, selector, withinMs } = tape.calls[c] as Call;
        const v = !call
          ? tape.answers[c]
          : fn === 0
            ? reader.count(selector, withinMs)
            : fn === 1
              ? reader.distinct(field, selector, withinMs)
              : reader.exists(selector, withinMs);
        if (v !== tape.answers[c])
          throw new Error(`isolated read ${c} answered ${v}, not ${tape.answers[c]}`);
        sink++;
      }
    }
    const used = process.cpuUsage(cpu);
    this.cpuUs += used.user + used.system;
    if (sink < 0) console.log(sink);
  }
}

type Variant = "full" | "tapeReader" | "tapeVerdicts" | "feedOnly" | "readsAlone" | "tapeWalk";
const VARIANTS: readonly Variant[] = [
  "full",
  "tapeReader",
  "tapeVerdicts",
  "feedOnly",
  "readsAlone",
  "tapeWalk",
];
/** The variants that walk every read's call, a chunk at a time. */
const WALKS_CALLS = (v: Variant) => v === "readsAlone" || v === "tapeWalk";

interface VariantResult {
  readonly cpuUs: number;
  readonly rows: number;
  readonly reads: number;
}

/**
 * One variant of one build over `rows`, chunk by chunk: an untimed recording pass makes the chunk's
 * tape first when the variant replays one. Each runs in a process of its own, so one variant's readers
 * and programs never share a call site's feedback with another's.
 */
function runVariant(build: Build, variant: Variant, rows: readonly JournalRow[]): VariantResult {
  const { ruleSet } = build;
  const n = ruleSet.rules.length;
  let tape = emptyTape();
  let row = 0;
  const recordingRules = ruleSet.rules.map((r, k) => {
    const program = r.rule.program as unknown as Record<ProgramMethod, (v: never, l?: number) => unknown>;
    return withEvaluate(r, (method, vars, limit) => {
      const e = program[method].call(program, vars, limit);
      tape.verdicts[row * n + k] = e;
      return e;
    });
  });
  // Verdicts are recorded through the same class that replays them; reads through the real programs.
  const recording = new Fold(
    build,
    variant === "tapeVerdicts" ? withRules(build, recordingRules) : ruleSet,
    (feed, r) => new Recorder(feed.readerAt(r.at), tape, WALKS_CALLS(variant)),
  );
  let next = 0;
  const tapeReader: WindowReader = new TapeReader(() => tape.answers[next++] as number | boolean);
  const replayRules = ruleSet.rules.map((r, k) => withEvaluate(r, () => tape.verdicts[row * n + k]));
  const fold =
    variant === "full"
      ? new Fold(build, ruleSet, (feed, r) => feed.readerAt(r.at))
      : variant === "tapeReader"
        ? new Fold(build, ruleSet, () => tapeReader)
        : variant === "tapeVerdicts"
          ? new Fold(build, withRules(build, replayRules), () => tapeReader)
          : new FeedOnly(build);
  // The tape is recorded over every row before the timed pass (switching between recording and replay
  // chunk by chunk kept the loop's feedback changing under it); the isolated reads, which need every
  // call's selector, go a chunk at a time so the tape stays small.
  const chunkSize = WALKS_CALLS(variant) ? CHUNK : rows.length;
  let reads = 0;
  for (let from = 0; from < rows.length; from += chunkSize) {
    const chunk = rows.slice(from, from + chunkSize);
    if (variant !== "full" && variant !== "feedOnly") {
      tape = emptyTape();
      recording.run(chunk, (i) => {
        row = i;
        tape.rowStarts.push(tape.calls.length);
      });
      tape.rowStarts.push(tape.calls.length);
      reads += tape.answers.length;
    }
    // The recording's garbage is collected before the timed pass, in every variant alike.
    globalThis.gc?.();
    next = 0;
    if (fold instanceof Fold)
      fold.run(chunk, (i) => {
        row = i;
      });
    else fold.run(chunk, WALKS_CALLS(variant) ? tape : undefined, variant === "readsAlone");
  }
  return { cpuUs: fold.cpuUs, rows: rows.length, reads };
}

/** The real reader, every call and answer noted on the tape. */
class Recorder implements WindowReader {
  constructor(
    private readonly reader: WindowReader,
    private readonly tape: Tape,
    private readonly withCalls: boolean,
  ) {}
  private note<V extends number | boolean>(
    fn: 0 | 1 | 2,
    field: IndexedField,
    selector: Selector,
    withinMs: number,
    v: V,
  ): V {
    if (this.withCalls) this.tape.calls.push({ fn, field, selector, withinMs });
    this.tape.answers.push(v);
    return v;
  }
  count(s: Selector, w: number): number {
    return this.note(0, "kind", s, w, this.reader.count(s, w));
  }
  distinct(f: IndexedField, s: Selector, w: number): number {
    return this.note(1, f, s, w, this.reader.distinct(f, s, w));
  }
  exists(s: Selector, w: number): boolean {
    return this.note(2, "kind", s, w, this.reader.exists(s, w));
  }
}

/** Answers from the tape, in the order the loop asks. */
class TapeReader implements WindowReader {
  constructor(private readonly next: () => number | boolean) {}
  count(): number {
    return this.next() as number;
  }
  distinct(): number {
    return this.next() as number;
  }
  exists(): boolean {
    return this.next() as boolean;
  }
}

// ---------------------------------------------------------------------------------------------------

const int = (x: number) => Math.round(x).toLocaleString("en-US");
const us = (cpuUs: number, rows: number) => (cpuUs / rows).toFixed(2);
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

const builds: Build[] = [await loadBuild("this checkout", CANDIDATE_DIR)];
if (BASELINE !== "none") builds.push(await loadBuild(`baseline ${BASELINE}`, buildCommit(BASELINE)));
const CHILD = process.env.BENCH_CHILD;
if (CHILD !== undefined) {
  // A breakdown variant in a process of its own: `<build index>:<variant>`, answered on stdout.
  const [b, variant] = CHILD.split(":") as [string, Variant];
  const result = runVariant(builds[Number(b)] as Build, variant, synthetic(BREAKDOWN_ROWS));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const [candidate] = builds as [Build];
console.log(
  `node ${process.version}; ${candidate.ruleSet.rules.length} rules, ${candidate.shapes.length} selector shapes; ${int(ROWS)} rows, chunks of ${int(CHUNK)}`,
);

// Memory of the window index at 7 days of rows (350,000 at 50,000 a day): the heap with the index alive
// minus the heap once it is released.
{
  const week = synthetic(7 * PER_DAY);
  let index: WindowIndexClass | undefined = new candidate.WindowIndex(candidate.shapes);
  for (const row of week) index.add(row);
  const entries = index.size;
  globalThis.gc?.();
  const held = process.memoryUsage().heapUsed;
  index = undefined;
  globalThis.gc?.();
  const released = process.memoryUsage().heapUsed;
  const gcNote = globalThis.gc ? "" : " (run with --expose-gc for a steady figure)";
  console.log(
    `window index at 7 days (${week.length} rows): ${entries} entries, ${((held - released) / 2 ** 20).toFixed(1)} MiB${gcNote}`,
  );
}

const rows = synthetic(ROWS);
const folds = builds.map((b) => new Fold(b, b.ruleSet, (feed, row) => feed.readerAt(row.at)));
const wall = process.hrtime.bigint();
for (let from = 0; from < rows.length; from += CHUNK) {
  const chunk = rows.slice(from, from + CHUNK);
  // The builds take turns, so drift lands on both alike.
  for (const f of folds) f.run(chunk);
}
const wallS = Number(process.hrtime.bigint() - wall) / 1e9;

console.log(
  `\nevaluate() throughput, rows per CPU-second of this thread (${wallS.toFixed(0)} s wall for both):`,
);
const rate = (f: Fold) => rows.length / (f.cpuUs / 1e6);
builds.forEach((b, i) => {
  const f = folds[i] as Fold;
  console.log(
    `  ${b.name.padEnd(24)} ${int(rate(f)).padStart(8)} rows/CPU-s (${(f.cpuUs / 1e6).toFixed(1)} s CPU), ${f.fires} fires`,
  );
});
if (folds[1] !== undefined) {
  const ratio = rate(folds[0] as Fold) / rate(folds[1]);
  console.log(
    `  this checkout / baseline: ${ratio.toFixed(2)}x (goal ≥ 2x: ${ratio >= 2 ? "met" : "MISSED"})`,
  );
  if (folds[0]?.fires !== folds[1].fires) console.log("  the builds' fires DIFFER");
}

if (BREAKDOWN_ROWS > 0) {
  // Variant by variant, the builds taking turns, each in a fresh process.
  const results = builds.map(() => ({}) as Record<Variant, VariantResult>);
  for (const variant of VARIANTS)
    builds.forEach((_, b) => {
      const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1] as string], {
        env: { ...process.env, BENCH_CHILD: `${b}:${variant}` },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
        maxBuffer: 1 << 20,
      });
      (results[b] as Record<Variant, VariantResult>)[variant] = JSON.parse(
        out.trim().split("\n").pop() as string,
      );
    });
  console.log(
    `\nwhere a row's time goes, first ${int(BREAKDOWN_ROWS)} rows, µs of CPU per row, each part in its own process:`,
  );
  const header = [
    "",
    "row",
    "feed",
    "framework",
    "CEL",
    "reads",
    "reads/row",
    "ns/read loop",
    "alone+tape",
    "ns/read alone",
    "loop/alone",
    "framework %",
  ];
  console.log(`  ${header.map((h, i) => (i === 0 ? h.padEnd(24) : h.padStart(i > 5 ? 13 : 9))).join(" ")}`);
  builds.forEach((build, b) => {
    const r = results[b] as Record<Variant, VariantResult>;
    const n = BREAKDOWN_ROWS;
    const reads = r.tapeReader.reads;
    const full = r.full.cpuUs;
    const feed = r.feedOnly.cpuUs;
    const framework = r.tapeVerdicts.cpuUs - feed;
    const cel = r.tapeReader.cpuUs - r.tapeVerdicts.cpuUs;
    const inLoop = full - r.tapeReader.cpuUs;
    const withTape = r.readsAlone.cpuUs - feed;
    const alone = r.readsAlone.cpuUs - r.tapeWalk.cpuUs;
    const cells = [
      us(full, n),
      us(feed, n),
      us(framework, n),
      us(cel, n),
      us(inLoop, n),
      (reads / n).toFixed(1),
      ((inLoop * 1000) / reads).toFixed(0),
      ((withTape * 1000) / reads).toFixed(0),
      ((alone * 1000) / reads).toFixed(0),
      `${(inLoop / alone).toFixed(2)}x`,
      pct(framework / full),
    ];
    console.log(`  ${build.name.padEnd(24)} ${cells.map((c, i) => c.padStart(i > 4 ? 13 : 9)).join(" ")}`);
  });
  console.log(
    "  feed: adding rows to the window index; framework: evaluate() with every rule's verdict from a tape (no CEL, no reads);\n" +
      "  CEL: the real programs over a reader answering from a tape; reads: the real reader in the loop, less that;\n" +
      "  alone+tape: the same reads made straight to the same fed reader, less the feed (the tape's walk included);\n" +
      "  alone: the same, less the same walk of the tape taking each answer from it (the read itself, as issue 4 measured it).",
  );
}
