/**
 * A month of fleet as `harness journal import` lines: four harnesses running hourly on one repository,
 * with enough verify failures, shared edits, collisions, budget overruns, repeated failures and loop
 * stops that every starter rule fires, and a tick every ten minutes. Seeded, so a failure reproduces.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { seededRandom } from "../../src/shell/demo/fleet-sim.js";
import { evaluatorCursor } from "../support/store-reads.js";
import type { TestFleet } from "./daemon-harness.js";

const REPO = "forge.example/org/reduit";
const HARNESSES = ["impl", "review", "nightly", "worker"] as const;
const PATHS = ["internal/ledger/writer.go", "internal/ledger/reader.go", "cmd/harness/main.go", "go.mod"];
const MINUTE = 60_000;

export interface MonthLine {
  readonly kind: "run_event" | "graph_event" | "tick";
  readonly admitted_at: string;
  readonly [field: string]: unknown;
}

/** Lines from `from` (ms) for `days` days, in admission order. */
export function fleetMonth(options: { readonly from: number; readonly days: number; readonly seed: number }) {
  const rnd = seededRandom(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const lines: MonthLine[] = [];
  const end = options.from + options.days * 24 * 60 * MINUTE;
  const runs = new Map<string, number>();
  let nextTick = options.from;
  const at = (ms: number) => new Date(ms).toISOString();
  const push = (ms: number, line: Omit<MonthLine, "admitted_at">) => {
    while (nextTick <= ms) {
      lines.push({ kind: "tick", type: "tick", admitted_at: at(nextTick) });
      nextTick += 10 * MINUTE;
    }
    lines.push({ ...line, admitted_at: at(ms) } as MonthLine);
  };
  /** The harness's next run and the fields every run_event of it carries. */
  const nextRun = (h: string) => {
    const n = (runs.get(h) ?? 0) + 1;
    runs.set(h, n);
    const run = `${h}#${n}`;
    return {
      run,
      common: { harness: h, run, adapter: "claude-code", repo: REPO, branch: "main", session: `s-${run}` },
    };
  };
  for (let hour = options.from; hour < end; hour += 60 * MINUTE) {
    let t = hour;
    // Now and then a harness is restarted into the same failure three times within minutes.
    if (rnd() < 0.05) {
      const h = pick(HARNESSES);
      const cause = pick(["c-panic", "c-oom"]);
      for (let i = 0; i < 3; i++) {
        const { common } = nextRun(h);
        t += 30_000;
        push(t, { kind: "run_event", type: "opened", ...common, trigger: "restart" });
        t += 60_000;
        push(t, {
          kind: "run_event",
          type: "closed",
          ...common,
          outcome: "failed",
          reason: "failed",
          exit_code: 2,
          cause_digest: cause,
        });
      }
    }
    for (const h of HARNESSES) {
      if (rnd() < 0.35) continue;
      const { run, common } = nextRun(h);
      t += 1_000 + Math.floor(rnd() * 30_000);
      push(t, { kind: "run_event", type: "opened", ...common, trigger: "schedule" });
      for (let i = 0; i < 2 + Math.floor(rnd() * 5); i++) {
        t += 1_000 + Math.floor(rnd() * 60_000);
        if (rnd() < 0.4) {
          push(t, {
            kind: "run_event",
            type: "tool",
            ...common,
            tool: "Bash",
            action: "verify",
            is_error: rnd() < 0.6,
            digest: pick(["go-test", "go-vet"]),
          });
        } else {
          const path = pick(PATHS);
          push(t, {
            kind: "run_event",
            type: "tool",
            ...common,
            tool: "Edit",
            action: "edit",
            is_error: false,
            digest: "e",
            paths: [path],
          });
          t += 200;
          push(t, {
            kind: "graph_event",
            type: "edge_added",
            edge: "edited",
            harness: h,
            run,
            repo: REPO,
            path,
          });
          if (rnd() < 0.05) {
            t += 200;
            push(t, {
              kind: "graph_event",
              type: "collision_started",
              scope: "file",
              harness: h,
              run,
              path,
              repo: REPO,
              harnesses: [h, pick(HARNESSES)],
              runs: [run],
            });
          }
        }
      }
      t += 1_000 + Math.floor(rnd() * 60_000);
      if (rnd() < 0.04) {
        push(t, { kind: "run_event", type: "loop_stopped", ...common, tool: "Bash", digest: "loop" });
        continue;
      }
      const r = rnd();
      const outcome = r < 0.55 ? "success" : r < 0.85 ? "failed" : "budget_exceeded";
      push(t, {
        kind: "run_event",
        type: "closed",
        ...common,
        outcome,
        reason: outcome === "success" ? "exited" : outcome,
        exit_code: outcome === "success" ? 0 : 1,
        cause_digest: outcome === "failed" ? pick(["c-panic", "c-oom"]) : "",
      });
    }
  }
  return lines;
}

/**
 * The month the daemon tests share, ending an hour before now so a 30-day backtest started now covers
 * every row, imported into the fleet's store; then the daemon started, and left to evaluate the month
 * live (its folding the rows after its cursor, in seq order). Returns the number of rows imported.
 */
export async function evaluateMonthLive(fleet: TestFleet): Promise<number> {
  const day = 24 * 60 * MINUTE;
  const lines = fleetMonth({ from: Date.now() - 30 * day + 2 * 60 * MINUTE, days: 29.9, seed: 20261202 });
  const file = path.join(fleet.root, "month.jsonl");
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  const imported = await fleet.cli(["journal", "import", file, "--store", fleet.storePath, "--json"]);
  if (imported.code !== 0) throw new Error(`journal import exited ${imported.code}: ${imported.stderr}`);
  await fleet.start();
  await fleet.until(
    () => evaluatorCursor(fleet) >= lines.length,
    "the evaluator to reach the imported month",
    120_000,
  );
  return lines.length;
}
