/**
 * Harnesses and runs as the supervisor knows them: a harness's spec, what spawned a run and how its
 * process ended, the run itself, and the fields that name a run on every row the supervisor writes.
 */
import { createHash } from "node:crypto";
import { redact } from "../../core/redact.js";

/** A scheduled harness fires on its schedule and by `trigger`; a resident one runs until it exits or is stopped. */
export type HarnessKind = "scheduled" | "resident";

export interface HarnessSpec {
  readonly name: string;
  readonly kind: HarnessKind;
  readonly adapter: string;
  readonly repo: string;
  readonly branch: string;
  /** The id the ledger gives its next run (a real ledger continues from its history); 1 by default. */
  readonly nextRun?: number;
}

/** The `trigger` field of an `opened` row: what spawned the run. */
export type Trigger = "schedule" | "trigger" | "start" | "restart";

/** How a process ended on its own (stops and skips are the supervisor's, not the process's). */
export type ExitOutcome = "success" | "failed" | "timed_out" | "budget_exceeded";

export interface Exit {
  readonly outcome: ExitOutcome;
  readonly exitCode?: number;
  /** The last line of output, kept for notifications; its redacted SHA-256 is the `cause_digest`. */
  readonly lastLine?: string;
}

/** One run, `<harness>#<n>`: in flight until it closes. */
export class Run {
  private ended = false;

  constructor(
    readonly id: string,
    readonly harness: HarnessSpec,
    readonly session: string,
    readonly trigger: Trigger,
  ) {}

  get running(): boolean {
    return !this.ended;
  }

  /** Ends the run once; false when it had already ended (the caller then must not close it again). */
  end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    return true;
  }
}

const hex = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex");

/** The session a new run's agent starts in: one per run, named after the run's id. */
export const sessionId = (run: string): string => `sess-${hex(run).slice(0, 12)}`;

/** REQ-4's `cause_digest`: SHA-256 of the redacted last output line, empty when there is none. */
export const causeDigest = (lastLine: string | undefined): string =>
  lastLine === undefined || lastLine === "" ? "" : hex(redact(lastLine));

/** The fields that name a run on every row the supervisor writes (the ledger's and the loop guard's). */
export function runFields(spec: HarnessSpec, run: string, session?: string) {
  return {
    harness: spec.name,
    run,
    adapter: spec.adapter,
    repo: spec.repo,
    branch: spec.branch,
    ...(session === undefined ? {} : { session }),
  };
}
