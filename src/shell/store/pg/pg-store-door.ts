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
import { PgDecisionStore, type PgFence, pgReadShadows } from "./pg-decision-store.js";
import { PgDerivedCursors } from "./pg-derived-cursors.js";
import { PgEvidenceReads } from "./pg-evidence-reads.js";
import { PgJournal } from "./pg-journal.js";
import { PgLastGoodCommits } from "./pg-last-good-commits.js";
import type { PgLease } from "./pg-lease.js";
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

  /** The leader's fence for the commits only a leader makes (none without a lease: one daemon). */
  private readonly fence: PgFence;

  constructor(
    readonly opened: OpenedPgStore,
    /** The leader's lease, when several daemons may share the database (issue 35). */
    lease?: PgLease,
  ) {
    const { pool } = opened;
    this.fence = lease === undefined ? async () => {} : (client) => lease.fence(client);
    this.journal = new PgJournal(pool);
    this.decisions = new PgDecisionStore(pool, this.fence);
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
    const journal = new PgJournalLog(this.opened.pool, {}, this.fence);
    return {
      journal,
      evaluator: new PgEvaluatorLog(this.opened.pool, this.journal, this.fence),
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
