/**
 * SQLite's door (`store-door.ts`): the synchronous store objects of one opened store (`stores.ts`),
 * each behind `promised`, so a call does its work at once and answers with it resolved.
 */
import type { JournalRow } from "../../core/journal.js";
import { type AsyncPort, promised, settled } from "./async-port.js";
import type { OpenedStore } from "./open-store.js";
import type { JournalPruner } from "./retention.js";
import type { DecisionsPort, JournalReads, RuleReadsPort, StoreDoor, WritePath } from "./store-door.js";
import { Stores } from "./stores.js";

export class SqliteStoreDoor implements StoreDoor {
  readonly backend = "sqlite";
  /** The synchronous objects, for what runs over the same connection without a door (tests, tools). */
  readonly stores: Stores;
  readonly journal: JournalReads;
  readonly decisions: DecisionsPort;
  readonly ruleReads: RuleReadsPort;
  readonly proposals;
  readonly evidence;
  readonly tokens;
  readonly agents;
  readonly agentRuns;
  readonly agentRunStops;
  readonly agentTold;
  readonly agentSessionRuns;
  readonly cursors;
  readonly lastGoodCommits;
  readonly notifyCooldowns;

  constructor(private readonly opened: OpenedStore) {
    const s = new Stores(opened);
    this.stores = s;
    const journal = s.journal;
    this.journal = {
      ...promised(journal),
      async *rowsInRange(fromSeq: number, toSeq: number): AsyncIterable<JournalRow> {
        yield* journal.rowsInRange(fromSeq, toSeq);
      },
    };
    this.decisions = promised(s.decisions);
    this.ruleReads = { ...promised(s.ruleReads), journal: promised(s.ruleReads.journal) };
    this.proposals = promised(s.proposals);
    this.evidence = promised(s.evidence);
    this.tokens = promised(s.tokens);
    this.agents = promised(s.agents);
    this.agentRuns = promised(s.agentRuns);
    this.agentRunStops = promised(s.agentRunStops);
    this.agentTold = promised(s.agentTold);
    this.agentSessionRuns = promised(s.agentSessionRuns);
    this.cursors = promised(s.cursors);
    this.lastGoodCommits = promised(s.lastGoodCommits);
    this.notifyCooldowns = promised(s.notifyCooldowns);
  }

  get label(): string {
    return this.opened.path;
  }

  writePath(onSyncError: (e: Error) => void): WritePath {
    const walSync = this.stores.walSync(onSyncError);
    const unsynced = <T>(commit: () => T): T => walSync.unsynced(commit);
    return {
      journal: this.stores.journalLog(unsynced),
      evaluator: this.stores.evaluatorLog(unsynced),
      close: () => walSync.close(),
    };
  }

  shadows() {
    return settled(() => this.stores.shadows());
  }

  pruner(retentionMs: number): AsyncPort<JournalPruner> {
    return promised(this.stores.pruner(retentionMs));
  }

  async close(): Promise<void> {
    this.opened.close();
  }
}
