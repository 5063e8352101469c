/**
 * PostgreSQL's door (`../store-door.ts`): each store object's PostgreSQL counterpart over one pool,
 * every one held to its SQLite class by a contract test (test/shell/store/pg/).
 */
import type { StoreDoor, WritePath } from "../store-door.js";
import type { OpenedPgStore } from "./open-pg-store.js";
import { PgAgentReads } from "./pg-agent-reads.js";
import { PgAgentRunReads } from "./pg-agent-run-reads.js";
import { PgAgentRunStops } from "./pg-agent-run-stops.js";
import { PgAgentSessionRuns } from "./pg-agent-session-runs.js";
import { PgAgentTold } from "./pg-agent-told.js";
import { PgDecisionStore, pgReadShadows } from "./pg-decision-store.js";
import { PgDerivedCursors } from "./pg-derived-cursors.js";
import { PgEvidenceReads } from "./pg-evidence-reads.js";
import { PgJournal } from "./pg-journal.js";
import { PgLastGoodCommits } from "./pg-last-good-commits.js";
import { PgNotifyCooldowns } from "./pg-notify-cooldowns.js";
import { PgProposalStore } from "./pg-proposal-store.js";
import { PgJournalPruner } from "./pg-retention.js";
import { PgRuleReads } from "./pg-rule-reads.js";
import { PgTokenStore } from "./pg-token-store.js";
import { PgEvaluatorLog, PgJournalLog } from "./pg-write-ports.js";

export class PgStoreDoor implements StoreDoor {
  readonly backend = "postgres";
  readonly journal: PgJournal;
  readonly decisions: PgDecisionStore;
  readonly ruleReads: PgRuleReads;
  readonly proposals: PgProposalStore;
  readonly evidence: PgEvidenceReads;
  readonly tokens: PgTokenStore;
  readonly agents: PgAgentReads;
  readonly agentRuns: PgAgentRunReads;
  readonly agentRunStops: PgAgentRunStops;
  readonly agentTold: PgAgentTold;
  readonly agentSessionRuns: PgAgentSessionRuns;
  readonly cursors: PgDerivedCursors;
  readonly lastGoodCommits: PgLastGoodCommits;
  readonly notifyCooldowns: PgNotifyCooldowns;

  constructor(readonly opened: OpenedPgStore) {
    const { pool } = opened;
    this.journal = new PgJournal(pool);
    this.decisions = new PgDecisionStore(pool);
    this.ruleReads = new PgRuleReads(pool);
    this.proposals = new PgProposalStore(pool);
    this.evidence = new PgEvidenceReads(pool);
    this.tokens = new PgTokenStore(pool);
    this.agents = new PgAgentReads(pool);
    this.agentRuns = new PgAgentRunReads(pool);
    this.agentRunStops = new PgAgentRunStops(pool);
    this.agentTold = new PgAgentTold(pool);
    this.agentSessionRuns = new PgAgentSessionRuns(pool);
    this.cursors = new PgDerivedCursors(pool);
    this.lastGoodCommits = new PgLastGoodCommits(pool);
    this.notifyCooldowns = new PgNotifyCooldowns(pool);
  }

  get label(): string {
    return this.opened.name;
  }

  /** PostgreSQL's WAL writer flushes an unsynced commit within `wal_writer_delay`: nothing to close. */
  writePath(): WritePath {
    const journal = new PgJournalLog(this.opened.pool);
    return {
      journal,
      evaluator: new PgEvaluatorLog(this.opened.pool, this.journal),
      close: async () => undefined,
    };
  }

  shadows() {
    return pgReadShadows(this.opened.pool);
  }

  pruner(retentionMs: number): PgJournalPruner {
    return new PgJournalPruner(this.opened, retentionMs);
  }

  close(): Promise<void> {
    return this.opened.close();
  }
}
