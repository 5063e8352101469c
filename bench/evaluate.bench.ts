/**
 * `npm run bench:evaluate`: evaluate() throughput in rows/s on one core, over a synthetic journal of
 * 1,000,000 rows (mostly tool rows, some opened/closed, graph events, a tick a minute) at 50,000 rows a
 * day, through the starter pack plus 50 generated rules each reaching a primitive call on every row of
 * its kind; and the memory the window index holds at 7 days of rows.
 */
import type { RuleLoad } from "../src/core/compile-rule.js";
import { evaluate } from "../src/core/evaluate.js";
import type { JournalRow } from "../src/core/journal.js";
import { loadRuleFile } from "../src/core/load-rule.js";
import { assembleRuleSet } from "../src/core/rule-set.js";
import { loadStarterPack } from "../src/core/starter-pack.js";
import { emptyState, StateAccumulator } from "../src/core/state.js";
import { selectorShapes, WindowFeed, WindowIndex } from "../src/core/window-index.js";

const ROWS = Number(process.env.ROWS ?? 1_000_000);
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
function generatedRules(): RuleLoad[] {
  const windows = ["10m", "1h", "2h", "24h"];
  const out: RuleLoad[] = [];
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
    out.push(loadRuleFile(`rules/gen-${i}.toml`, text));
  }
  return out;
}

const generated = generatedRules();
const broken = generated.filter((l) => !l.ok);
if (broken.length > 0) throw new Error(`generated rules failed to load: ${JSON.stringify(broken[0])}`);
const ruleSet = assembleRuleSet({
  starter: loadStarterPack(),
  policy: [{ repo: "bench", loads: generated }],
  shadowPeriod: 0,
});
const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
console.log(
  `node ${process.version}; ${ruleSet.rules.length} rules, ${shapes.length} selector shapes; ${ROWS} rows`,
);

// Memory of the window index at 7 days of rows (350,000 at 50,000 a day): the heap with the index alive
// minus the heap once it is released.
const week = synthetic(7 * PER_DAY);
let index: WindowIndex | undefined = new WindowIndex(shapes);
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

const rows = synthetic(ROWS);
// Rows per second of this thread's CPU time as well as of the wall clock: "on one core" is the CPU
// figure, and on a shared machine the wall clock also counts the time other processes held the core.
// The loop is the one the live evaluator and a backtest run: add the row to the window feed, evaluate
// it, apply its delta, act on its fires, and let the outcome go.
const started = process.hrtime.bigint();
const cpuStarted = process.cpuUsage();
const feed = new WindowFeed(shapes);
const state = new StateAccumulator(emptyState);
let fires = 0;
for (const row of rows) {
  feed.add(row);
  const outcome = evaluate(ruleSet, row, state.current, feed.readerAt(row.at));
  state.apply(outcome.delta);
  fires += outcome.fires.length;
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuStarted);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
console.log(
  `evaluate: ${(rows.length / cpuSeconds).toFixed(0)} rows per CPU-second (${cpuSeconds.toFixed(1)} s CPU); ${(rows.length / seconds).toFixed(0)} rows/s wall (${seconds.toFixed(1)} s); ${fires} fires`,
);
