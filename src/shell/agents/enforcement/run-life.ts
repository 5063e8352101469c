/**
 * A hook-fed run's life, once: opened, rows, one `closed` row, and nothing after it. Which run a hook
 * call's row belongs to is decided here, before its admission, from the store (so the command and http
 * paths, and a restarted daemon, decide alike):
 *
 * - A session's run is `<harness>#<session>` until that run closes; its later runs are
 *   `<harness>#<session>~<generation>` (`core/hook-runs.ts`), recorded in `agent_session_runs`.
 * - A row for an open run is the run's.
 * - After the close, a `closed` row is not written (the run was closed once; a SessionEnd after a stop
 *   or after the stale closer is the same end told twice), and the call says so.
 * - After the close, a SessionStart (`opened`) opens the session's next run, subject to holds like any
 *   new run (it is first seen now); unless the run was stopped and the operator has not released the stop
 *   (`harness rules resume <run>`): then the row is refused and the call answered stopped, as every call
 *   of a stopped run is.
 * - After the close, a `tool` or `mark` row is refused (a late row of an ended run: a call in flight when
 *   the stop came, the Stop hook's mark after the stop), except after the stale closer's close, which only
 *   said the session was silent: a session that is heard again goes on as its next run. A stop not
 *   released refuses these too.
 *
 * Refused rows are counted with Append's refusals (`run_closed`) and noted in the call's answer. A
 * `closed` row in flight (placed, not yet committed) counts as the close for the calls placed meanwhile,
 * and a stop is not delivered to its run (`run-verdict.ts`), so two closes cannot race in one daemon.
 */
import { resumeCommand } from "../../../core/held-sentence.js";
import { sessionRunId } from "../../../core/hook-runs.js";
import type { AgentRunStops } from "../../store/agent-run-stops.js";
import type { AgentSessionRuns, SessionRun } from "../../store/agent-session-runs.js";
import { STALE_REASON } from "./stale-runs.js";

export type RowType = "opened" | "closed" | "tool" | "mark" | "attempt";

/** Where a hook call's row goes: `run`'s, or nowhere (`refused`, with why). */
export interface Placement {
  /** The run the call is of: its verdict is this run's. */
  readonly run: string;
  /** Why the row is not recorded; `counted`: as a refusal (a second close is not one). */
  readonly refused?: { readonly note: string; readonly counted: boolean };
  /** Called once the row's admission is over, admitted or not. */
  readonly done: () => void;
}

/** How many taken ids a new run's id may step over before the row is refused. */
const MAX_STEPS = 64;

const nothing = (): void => {};

export class RunLife {
  /** Runs whose `closed` row is placed and not yet committed. */
  private readonly closing = new Set<string>();

  constructor(
    private readonly deps: {
      readonly sessions: AgentSessionRuns;
      readonly stops: AgentRunStops;
      readonly clock: () => number;
    },
  ) {}

  /** The session's current run. */
  current(harness: string, session: string): SessionRun {
    return (
      this.deps.sessions.latestOf(harness, session) ?? {
        run: sessionRunId(harness, session, 1),
        generation: 1,
      }
    );
  }

  /** Whether the run is closed, or its `closed` row is on its way: a stop must not close it again. */
  closed(run: string): boolean {
    return this.closing.has(run) || this.deps.sessions.closedReason(run) !== undefined;
  }

  /** The session a hook-fed run is of. */
  sessionOf(harness: string, run: string): string | undefined {
    const later = this.deps.sessions.sessionOf(run);
    if (later !== undefined) return later;
    const prefix = `${harness}#`;
    return run.startsWith(prefix) && run.length > prefix.length ? run.slice(prefix.length) : undefined;
  }

  /** Where a call of `session` with a row of `type` (none: a call that records nothing) goes. */
  place(harness: string, session: string, type: RowType | undefined): Placement {
    const cur = this.current(harness, session);
    if (type === undefined) return { run: cur.run, done: nothing };
    const reason = this.closing.has(cur.run) ? "" : this.deps.sessions.closedReason(cur.run);
    if (reason === undefined) {
      if (type !== "closed") return { run: cur.run, done: nothing };
      this.closing.add(cur.run);
      return { run: cur.run, done: () => this.closing.delete(cur.run) };
    }
    if (type === "closed")
      return refused(cur.run, `${cur.run} is closed already; a second close is not recorded`, false);
    const stop = this.deps.stops.get(cur.run);
    if (stop !== undefined && stop.releasedAt === undefined)
      return refused(
        cur.run,
        `${cur.run} was stopped and its stop is not released (\`${resumeCommand(cur.run)}\`); the row is not recorded`,
        true,
      );
    if (type === "opened" || reason === STALE_REASON) {
      const next = this.next(harness, session, cur);
      if (next !== undefined) return { run: next, done: nothing };
      return refused(cur.run, `no free run id after ${cur.run}; the row is not recorded`, true);
    }
    return refused(cur.run, `${cur.run} is closed; a row after its close is not recorded`, true);
  }

  /** The session's next run, recorded; undefined when no id near it is free. */
  private next(harness: string, session: string, cur: SessionRun): string | undefined {
    const { sessions } = this.deps;
    for (let generation = cur.generation + 1; generation <= cur.generation + MAX_STEPS; generation++) {
      const run = sessionRunId(harness, session, generation);
      if (sessions.taken(run)) continue;
      sessions.add(harness, session, { run, generation }, this.deps.clock());
      return run;
    }
    return undefined;
  }
}

const refused = (run: string, note: string, counted: boolean): Placement => ({
  run,
  refused: { note, counted },
  done: nothing,
});
