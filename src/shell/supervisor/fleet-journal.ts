/**
 * The fleet's producers of journal rows (the ledger, the loop guard, and the demo's observer and graph):
 * one `JournalService` client per producer credential, since the daemon stamps each row's source from
 * its credential (contract item 3 in `reference-supervisor.ts`).
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ProducerSource } from "../../core/sources.js";
import { type JournalClient, journalClient } from "../rpc/client.js";

/** One event as a producer sends it: the row's kind, the event's type and its REQ-4 fields. */
export interface ProducedEvent {
  readonly kind: "run_event" | "graph_event";
  readonly type: string;
  /** The source's own time, RFC 3339; the producer's clock when omitted. */
  readonly at?: string;
  readonly [field: string]: JsonValue | undefined;
}

/**
 * A row did not reach the journal: the daemon refused it (the producer built it wrong, a bug to report,
 * never to retry) or did not answer.
 */
export class JournalAppendError extends Error {
  constructor(
    readonly source: ProducerSource,
    readonly type: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${source} ${type} row not admitted: ${reason}`, options);
    this.name = "JournalAppendError";
  }
}

/**
 * The fleet's way into the rule journal: one `JournalService` client per producer credential, and what
 * the daemon answered (the last admitted seq, so a caller can wait for the evaluator to catch up; the
 * rows dropped because its queue was full).
 */
export class FleetJournal {
  private readonly producers = new Map<ProducerSource, JournalProducer>();
  lastSeq = 0;
  dropped = 0;

  constructor(
    private readonly socketPath: string,
    private readonly tokens: Readonly<Partial<Record<ProducerSource, string>>>,
    readonly clock: () => number = Date.now,
  ) {}

  producer(source: ProducerSource): JournalProducer {
    let p = this.producers.get(source);
    if (p === undefined) {
      const token = this.tokens[source];
      if (token === undefined)
        throw new JournalAppendError(source, "", "no credential for this source was given to the fleet");
      p = new JournalProducer(source, journalClient({ socketPath: this.socketPath }, token), this);
      this.producers.set(source, p);
    }
    return p;
  }
}

export class JournalProducer {
  constructor(
    readonly source: ProducerSource,
    private readonly client: JournalClient,
    private readonly journal: FleetJournal,
  ) {}

  /** Appends `events` in order; resolves to each one's seq, or undefined for a row the daemon dropped. */
  async append(events: readonly ProducedEvent[]): Promise<readonly (number | undefined)[]> {
    const now = new Date(this.journal.clock()).toISOString();
    const wire = events.map(({ kind, ...fields }) => {
      const event: JsonObject = {};
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) event[k] = v;
      event.at ??= now;
      return { kind, event };
    });
    let res: Awaited<ReturnType<JournalClient["append"]>>;
    try {
      res = await this.client.append({ events: wire });
    } catch (e) {
      const type = events[0]?.type ?? "";
      throw new JournalAppendError(this.source, type, `the daemon did not answer: ${(e as Error).message}`, {
        cause: e,
      });
    }
    return res.results.map((r, i) => {
      const type = events[i]?.type ?? "";
      switch (r.result.case) {
        case "admitted": {
          const seq = Number(r.result.value.seq);
          this.journal.lastSeq = Math.max(this.journal.lastSeq, seq);
          return seq;
        }
        case "dropped":
          this.journal.dropped++;
          return undefined;
        case "rejected":
          throw new JournalAppendError(this.source, type, `refused: ${r.result.value.reason}`);
        default:
          throw new JournalAppendError(this.source, type, "the daemon's answer names no result");
      }
    });
  }
}
