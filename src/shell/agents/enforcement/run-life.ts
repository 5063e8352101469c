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
 *
 * Each decision reads the store and may write it (a session's next run), between awaits. A session's
 * placements and its stop deliveries therefore take turns (`support/turns.ts`): two hook calls of one
 * session coming at once are placed as they would be one after the other, and a stop is delivered once.
 */
import { resumeCommand } from "../../../core/held-sentence.js";
import { sessionRunId } from "../../../core/hook-runs.js";
import type { SessionRun } from "../../store/agent-session-runs.js";
import type { StoreDoor } from "../../store/store-door.js";
import { KeyedTurns } from "../../support/turns.js";
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
  /** Per session, its placements and stop deliveries, one at a time. */
  private readonly turns = new KeyedTurns();

  constructor(
    private readonly deps: {
      readonly sessions: StoreDoor["agentSessionRuns"];
      readonly stops: StoreDoor["agentRunStops"];
      readonly clock: () => number;
    },
  ) {}

  /** The session's current run. */
  async current(harness: string, session: string): Promise<SessionRun> {
    return (
      (await this.deps.sessions.latestOf(harness, session)) ?? {
        run: sessionRunId(harness, session, 1),
        generation: 1,
      }
    );
  }

  /** Whether the run is closed, or its `closed` row is on its way: a stop must not close it again. */
  async closed(run: string): Promise<boolean> {
    return this.closing.has(run) || (await this.deps.sessions.closedReason(run)) !== undefined;
  }

  /** The session a hook-fed run is of. */
  async sessionOf(harness: string, run: string): Promise<string | undefined> {
    const later = await this.deps.sessions.sessionOf(run);
    if (later !== undefined) return later;
    const prefix = `${harness}#`;
    return run.startsWith(prefix) && run.length > prefix.length ? run.slice(prefix.length) : undefined;
  }

  /** Where a call of `session` with a row of `type` (none: a call that records nothing) goes. */
  place(harness: string, session: string, type: RowType | undefined): Promise<Placement> {
    return this.turns.run(sessionKey(harness, session), () => this.placeNow(harness, session, type));
  }

  /**
   * Runs `close`, which commits the run's `closed` row (a stop's delivery), in its session's turn, unless
   * the run is closed already or its `closed` row is on its way; `close` is handed the run's session.
   * True when it ran. In the turn, a placement of the session waits for the commit, and sees the close.
   */
  async closeOnce(
    harness: string,
    run: string,
    close: (session: string | undefined) => Promise<void>,
  ): Promise<boolean> {
    const session = await this.sessionOf(harness, run);
    // A run of no session of the harness (never placed here) takes turns with itself alone.
    const key = session === undefined ? `${harness}\u0000\u0000${run}` : sessionKey(harness, session);
    return this.turns.run(key, async () => {
      if (await this.closed(run)) return false;
      await close(session);
      return true;
    });
  }

  /** `place`, in the session's turn. */
  private async placeNow(harness: string, session: string, type: RowType | undefined): Promise<Placement> {
    const cur = await this.current(harness, session);
    if (type === undefined) return { run: cur.run, done: nothing };
    const reason = this.closing.has(cur.run) ? "" : await this.deps.sessions.closedReason(cur.run);
    if (reason === undefined) {
      if (type !== "closed") return { run: cur.run, done: nothing };
      this.closing.add(cur.run);
      return { run: cur.run, done: () => this.closing.delete(cur.run) };
    }
    if (type === "closed")
      return refused(cur.run, `${cur.run} is closed already; a second close is not recorded`, false);
    const stop = await this.deps.stops.get(cur.run);
    if (stop !== undefined && stop.releasedAt === undefined)
      return refused(
        cur.run,
        `${cur.run} was stopped and its stop is not released (\`${resumeCommand(cur.run)}\`); the row is not recorded`,
        true,
      );
    if (type === "opened" || reason === STALE_REASON) {
      const next = await this.next(harness, session, cur);
      if (next !== undefined) return { run: next, done: nothing };
      return refused(cur.run, `no free run id after ${cur.run}; the row is not recorded`, true);
    }
    return refused(cur.run, `${cur.run} is closed; a row after its close is not recorded`, true);
  }

  /** The session's next run, recorded; undefined when no id near it is free. */
  private async next(harness: string, session: string, cur: SessionRun): Promise<string | undefined> {
    const { sessions } = this.deps;
    for (let generation = cur.generation + 1; generation <= cur.generation + MAX_STEPS; generation++) {
      const run = sessionRunId(harness, session, generation);
      if (await sessions.taken(run)) continue;
      await sessions.add(harness, session, { run, generation }, this.deps.clock());
      return run;
    }
    return undefined;
  }
}

/** A session's key among the turns: harness names hold no NUL. */
const sessionKey = (harness: string, session: string): string => `${harness}\u0000${session}`;

const refused = (run: string, note: string, counted: boolean): Placement => ({
  run,
  refused: { note, counted },
  done: nothing,
});
