/**
 * The loop guard for hook-fed runs (SPEC-0029 REQ-12, the logic of `core/loop-guard.ts` as the supervisor runs it):
 * eight identical tool calls (same tool and digest) in an unbroken streak in one run trip it. It derives
 * a `loop_stopped` row (source `loopguard`) from the committed tool row that tripped it and, in the same
 * transaction, records the run stopped (`agent-run-stops`), so the run's next hook call answers stopped.
 * It consults no rule and no rule configures it; rules see its trips only as `loop_stopped` rows. Each
 * stop, once committed, is told to `onStop` (the decision export).
 */
import { HOOK_FED_FIELD, isHookFed } from "../../../core/hook-runs.js";
import type { JournalRow } from "../../../core/journal.js";
import { LOOP_THRESHOLD, LoopGuard } from "../../../core/loop-guard.js";
import type { Derived, Deriver } from "../../derive/deriver.js";
import { EndedRuns } from "../../derive/ended-runs.js";

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** A run the loop guard stopped, as committed: the tool row that tripped it and its `loop_stopped` row. */
export interface LoopGuardStop {
  readonly harness: string;
  readonly run: string;
  readonly tool: string;
  /** The tool row that tripped the guard. */
  readonly seq: number;
  /** The `loop_stopped` row derived from it. */
  readonly loopSeq: number;
  readonly at: number;
}

export class HookLoopGuard implements Deriver {
  readonly name = "loop-guard";
  readonly kinds = ["run_event"] as const;
  readonly enabled = () => true;
  /** A guard per run in flight, dropped when the run closes or trips. */
  private guards = new Map<string, LoopGuard>();
  /** Runs that tripped or closed: a stopped run's late tool rows neither trip it again nor start a streak. */
  private readonly ended = new EndedRuns();

  constructor(
    private readonly clock: () => number,
    private readonly onStop?: (stop: LoopGuardStop) => void,
  ) {}

  reset(): void {
    this.guards = new Map();
    this.ended.clear();
  }

  private end(run: string): void {
    this.guards.delete(run);
    this.ended.add(run);
  }

  derive(row: JournalRow): Derived | undefined {
    const e = row.event;
    const run = str(e.run);
    const harness = str(e.harness);
    if (run === "" || harness === "") return undefined;
    if (e.type === "closed") {
      this.end(run);
      return undefined;
    }
    if (!isHookFed(e) || this.ended.has(run) || (e.type !== "mark" && e.type !== "tool")) return undefined;
    let guard = this.guards.get(run);
    if (guard === undefined) {
      guard = new LoopGuard(LOOP_THRESHOLD);
      this.guards.set(run, guard);
    }
    if (e.type === "mark") {
      guard.mark(harness, run, str(e.mark));
      return undefined;
    }
    if (guard.tool(harness, run, str(e.tool), str(e.digest)) === undefined) return undefined;
    this.end(run);
    const event = {
      type: "loop_stopped",
      harness,
      run,
      adapter: str(e.adapter),
      ...(typeof e.session === "string" ? { session: e.session } : {}),
      tool: str(e.tool),
      digest: str(e.digest),
      [HOOK_FED_FIELD]: true,
    };
    const at = this.clock();
    const onStop = this.onStop;
    return {
      rows: [{ source: "loopguard", kind: "run_event", event }],
      writes: [{ kind: "loop_guard_stop", run, harness, at, row: 0 }],
      ...(onStop === undefined
        ? {}
        : {
            committed: ([loopSeq]: readonly number[]) =>
              onStop({ harness, run, tool: event.tool, seq: row.seq, loopSeq: loopSeq as number, at }),
          }),
    };
  }
}
