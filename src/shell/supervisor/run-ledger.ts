/**
 * The run ledger's rows (contract items 1 and 3 in `reference-supervisor.ts`), written with the
 * `ledger` credential: `opened` when a run is spawned, `closed` when it ends, and a lone `closed` for a
 * skipped firing, which spawned nothing. Each resolves to the row's seq as `JournalProducer.append` does.
 */
import type { JournalProducer } from "./fleet-journal.js";
import { type HarnessSpec, type Run, runFields } from "./runs.js";

/** What a `closed` row says of a process that ended on its own. */
export interface ProcessEnd {
  readonly exitCode?: number;
  readonly causeDigest?: string;
}

type Seqs = Promise<readonly (number | undefined)[]>;

export class RunLedger {
  constructor(private readonly producer: JournalProducer) {}

  opened(run: Run): Seqs {
    return this.producer.append([
      {
        kind: "run_event",
        type: "opened",
        ...runFields(run.harness, run.id, run.session),
        trigger: run.trigger,
      },
    ]);
  }

  /** `run` closed with `outcome`; an empty `reason` and an empty cause digest are left out of the row. */
  closed(run: Run, outcome: string, reason: string, extra: ProcessEnd): Seqs {
    return this.producer.append([
      {
        kind: "run_event",
        type: "closed",
        ...runFields(run.harness, run.id, run.session),
        outcome,
        ...(reason === "" ? {} : { reason }),
        ...(extra.exitCode === undefined ? {} : { exit_code: extra.exitCode }),
        ...(extra.causeDigest === undefined || extra.causeDigest === ""
          ? {}
          : { cause_digest: extra.causeDigest }),
      },
    ]);
  }

  /** A scheduled firing the supervisor skipped: its run id, closed `skipped` with `reason`. */
  skipped(harness: HarnessSpec, run: string, reason: "rule_hold" | "overlap"): Seqs {
    return this.producer.append([
      { kind: "run_event", type: "closed", ...runFields(harness, run), outcome: "skipped", reason },
    ]);
  }
}
