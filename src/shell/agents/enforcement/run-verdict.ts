/**
 * What a hook call of a hook-fed run may do (SPEC-0029 REQ-11, REQ-12), decided by the daemon
 * from the store, never guessed by the hook:
 *
 * - `stopped`: an enforced stop fired for the run (or for its harness while it was in flight), or the
 *   loop guard tripped on it. The first hook call answered `stopped` delivers the stop: in one
 *   transaction the stop is recorded delivered (a rule's stop action `ok`) and the run's `closed` row is
 *   written, `cancelled` / `rule_stop` for a rule, `cancelled` / `operator` for the loop guard (as the
 *   reference supervisor closes a loop-guard stop). Every later call of the run is answered `stopped`,
 *   its reason naming `harness rules resume <run>`; a run closed before the call (its SessionEnd came
 *   first) is not closed again (`run-life.ts`). Once the operator releases the stop, the session's next
 *   SessionStart is a new run, whose verdict is its own.
 * - `held`: a hold is on the harness and the run was first seen after it: the seq of its first row of
 *   any type is after the seq of the row whose fire placed the hold, or it has no committed row yet
 *   (first seen now, which is after the hold). A run first seen before the hold keeps working, as
 *   REQ-11 says of a running process ("a process already running SHALL NOT be stopped by the hold").
 *   The first row, not the `opened` row: a SessionStart can be set aside in the spool, arrive late or
 *   never arrive (an http hook may never deliver it), and a missing `opened` row must not let a new
 *   session through a hold. A session already running when the hooks were installed is
 *   first seen at its first hook call, so it is held if that call comes after the hold: the daemon
 *   cannot tell it from a new one, and it fails closed.
 * - `allow` otherwise.
 *
 * `peek` answers the same without delivering anything: it is what the read-tier `CheckRun` RPC calls. A
 * reader may look; only the ingest path, which holds the run's producer credentials and answers the
 * agent, acts on the answer, so only it delivers (and a stop is never spent on a look).
 */

import { clearCommand, resumeCommand } from "../../../core/held-sentence.js";
import { HOOK_FED_FIELD } from "../../../core/hook-runs.js";
import type { RunVerdict } from "../../../core/run-verdict.js";
import type { Hold } from "../../../core/state.js";
import type { AppendDerived } from "../../derive/deriver.js";
import type { AgentRunStop } from "../../store/agent-run-stops.js";
import type { StoreDoor } from "../../store/store-door.js";
import { StopSettledError } from "../../store/write-ports.js";
import type { RunLife } from "./run-life.js";

export interface RunVerdicts {
  /**
   * What a hook call of this run may do now. A hold bites only on runs first seen after it (REQ-11).
   * Delivers a pending stop (records it delivered and closes the run cancelled / rule_stop) when it
   * answers `stopped` for the first time, and answers once that is committed.
   */
  check(harness: string, run: string): Promise<RunVerdict>;
  /** The verdict `check` would give, delivering nothing. */
  peek(harness: string, run: string): Promise<RunVerdict>;
}

export interface RunVerdictDeps {
  readonly reads: StoreDoor["agentRuns"];
  readonly stops: StoreDoor["agentRunStops"];
  /** The holds as last committed (the evaluator's state). */
  readonly holds: () => Readonly<Record<string, Hold>>;
  readonly append: AppendDerived;
  readonly clock: () => number;
  /** Closes a run once, in its session's turn, and tells the session it is of. */
  readonly life: Pick<RunLife, "closeOnce">;
}

const ALLOW: RunVerdict = { kind: "allow" };

export class StoreRunVerdicts implements RunVerdicts {
  constructor(private readonly deps: RunVerdictDeps) {}

  async check(harness: string, run: string): Promise<RunVerdict> {
    const stop = await this.deps.stops.get(run);
    if (stop === undefined) return this.held(harness, run);
    // A run closed already (its SessionEnd came first, or is being committed) is not closed again: the
    // stop settler records the stop closed first when it reaches that row. Two calls of the run racing
    // here both read the stop undelivered; in the session's turn, the second finds the first's close.
    if (stop.deliveredAt === undefined)
      await this.deps.life.closeOnce(harness, run, (session) => this.deliver(stop, session));
    return stopped(stop);
  }

  /** The verdict `check` would give, delivering nothing. */
  async peek(harness: string, run: string): Promise<RunVerdict> {
    const stop = await this.deps.stops.get(run);
    return stop !== undefined ? stopped(stop) : this.held(harness, run);
  }

  private async held(harness: string, run: string): Promise<RunVerdict> {
    const holds = Object.values(this.deps.holds()).filter((h) => h.harness === harness);
    // Read only when a hold is on the harness, each read at once (one round trip's wait, not one per
    // hold, on a store across a network); no row yet: first seen now, after every hold.
    if (holds.length === 0) return ALLOW;
    const { reads } = this.deps;
    const [seen, ...placedAt] = await Promise.all([
      reads.firstSeq(run),
      ...holds.map((h) => reads.fireSeq(h.fireId)),
    ]);
    let first: Hold | undefined;
    for (const [i, hold] of holds.entries()) {
      const placed = placedAt[i];
      // Seen before the hold: a running process, which no hold stops (REQ-11). A fire log row is never
      // deleted while its hold is on, so `placed` is known; were it not, the hold bites (fail closed).
      if (seen !== undefined && placed !== undefined && seen < placed) continue;
      // First seen at the very row that placed it (an attempt of a run whose opening never arrived):
      // the run was making that call, so it is running too.
      if (seen !== undefined && seen === placed && hold.event.run === run) continue;
      if (first === undefined || hold.since < first.since) first = hold;
    }
    if (first === undefined) return ALLOW;
    return { kind: "held", rule: first.rule, fireId: first.fireId, clearCommand: clearCommand(harness) };
  }

  /**
   * The stop delivered and the run closed, in one transaction with the `closed` row; refused by the
   * store when another call (on any daemon on the store) delivered it first, and then done already.
   */
  private async deliver(stop: AgentRunStop, session: string | undefined): Promise<void> {
    const at = this.deps.clock();
    const byRule = stop.by === "rule";
    await this.deps
      .append(
        [
          {
            source: "ledger",
            kind: "run_event",
            event: {
              type: "closed",
              harness: stop.harness,
              run: stop.run,
              ...(session === undefined ? {} : { session }),
              outcome: "cancelled",
              reason: byRule ? "rule_stop" : "operator",
              [HOOK_FED_FIELD]: true,
            },
          },
        ],
        [{ kind: "stop_delivered", stop, at }],
      )
      .catch((e: unknown) => {
        if (!(e instanceof StopSettledError)) throw e;
      });
  }
}

const stopped = (stop: AgentRunStop): RunVerdict => ({
  kind: "stopped",
  rule: stop.rule,
  fireId: stop.fireId,
  by: stop.by,
  run: stop.run,
  resumeCommand: resumeCommand(stop.run),
  released: stop.releasedAt !== undefined,
});
