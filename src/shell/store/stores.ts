/**
 * The store behind its door: the objects the rest of the shell reads and writes the store through, each
 * named for what its caller needs, over one opened store's connection. Nothing outside `store/` holds
 * the connection or writes SQL: whoever opens the store (the daemon's composition root, a worker, an
 * offline command) hands these out. Each is built on first use and kept, so its statements are
 * prepared once.
 */
import type { CoreState } from "../../core/state.js";
import { AgentReads } from "./agent-reads.js";
import { AgentRunReads } from "./agent-run-reads.js";
import { AgentRunStops } from "./agent-run-stops.js";
import { AgentSessionRuns } from "./agent-session-runs.js";
import { AgentTold } from "./agent-told.js";
import { DecisionStore, readShadows } from "./decision-store.js";
import { DerivedCursors } from "./derived-cursors.js";
import { EvidenceReads } from "./evidence-reads.js";
import { JournalCommits } from "./journal-commits.js";
import { JournalQueryReads } from "./journal-query-reads.js";
import { JournalTable } from "./journal-table.js";
import { LastGoodCommits } from "./last-good-commits.js";
import { NotifyCooldowns } from "./notify-cooldowns.js";
import type { Db, OpenedStore } from "./open-store.js";
import { ProposalStore } from "./proposal-store.js";
import { JournalPruner } from "./retention.js";
import { RuleReads } from "./rule-reads.js";
import { SqliteEvaluatorLog, SqliteJournalLog, type Unsynced } from "./sqlite-write-ports.js";
import { TokenStore } from "./token-store.js";
import { WalSync } from "./wal-sync.js";
import type { EvaluatorLog, JournalLog } from "./write-ports.js";

export class Stores {
  private readonly made = new Map<abstract new (db: Db) => unknown, unknown>();

  constructor(private readonly opened: OpenedStore) {}

  /** The store's file. */
  get path(): string {
    return this.opened.path;
  }

  private one<T>(make: new (db: Db) => T): T {
    let made = this.made.get(make) as T | undefined;
    if (made === undefined) {
      made = new make(this.opened.db);
      this.made.set(make, made);
    }
    return made;
  }

  /** The journal's rows: appended by the writer, read by the evaluator, a backtest's replay source. */
  get journal(): JournalTable {
    return this.one(JournalTable);
  }

  /** What the journal writer commits through, over the same journal. */
  get journalCommits(): JournalCommits {
    let made = this.made.get(JournalCommits) as JournalCommits | undefined;
    if (made === undefined) {
      made = new JournalCommits(this.opened.db, this.journal);
      this.made.set(JournalCommits, made);
    }
    return made;
  }

  /** What the journal writer commits through; `unsynced` runs a commit without waiting for the disk. */
  journalLog(unsynced?: Unsynced): JournalLog {
    return new SqliteJournalLog(
      this.journalCommits,
      { cursors: this.cursors, stops: this.agentRunStops, tokens: this.tokens },
      unsynced,
    );
  }

  /** What the evaluator reads and commits through; `unsynced` as for `journalLog`. */
  evaluatorLog(unsynced?: Unsynced): EvaluatorLog {
    return new SqliteEvaluatorLog(this.journalCommits, this.decisions, unsynced);
  }

  /** The rows a rule miner's journal queries read. */
  get journalQueries(): JournalQueryReads {
    return this.one(JournalQueryReads);
  }

  /** The evaluator's decisions: cursor, state, fire log, actions. */
  get decisions(): DecisionStore {
    return this.one(DecisionStore);
  }

  /** RuleService's reads of the fire log, actions, annotations and holds. */
  get ruleReads(): RuleReads {
    return this.one(RuleReads);
  }

  get proposals(): ProposalStore {
    return this.one(ProposalStore);
  }

  /** What a proposal's evidence ids may name. */
  get evidence(): EvidenceReads {
    return this.one(EvidenceReads);
  }

  get tokens(): TokenStore {
    return this.one(TokenStore);
  }

  /** The last run_event row of a harness (`harness doctor`). */
  get agents(): AgentReads {
    return this.one(AgentReads);
  }

  /** What a hook-fed run's verdict reads. */
  get agentRuns(): AgentRunReads {
    return this.one(AgentRunReads);
  }

  /** The stops of agent runs, and their settling. */
  get agentRunStops(): AgentRunStops {
    return this.one(AgentRunStops);
  }

  /** What hook-fed runs are told of the rules. */
  get agentTold(): AgentTold {
    return this.one(AgentTold);
  }

  /** Which run each agent session is now, and whether a run is closed. */
  get agentSessionRuns(): AgentSessionRuns {
    return this.one(AgentSessionRuns);
  }

  /** The derived-row producers' cursors. */
  get cursors(): DerivedCursors {
    return this.one(DerivedCursors);
  }

  get lastGoodCommits(): LastGoodCommits {
    return this.one(LastGoodCommits);
  }

  get notifyCooldowns(): NotifyCooldowns {
    return this.one(NotifyCooldowns);
  }

  /** Every hash's shadow record as committed. */
  shadows(): CoreState["shadows"] {
    return readShadows(this.opened.db);
  }

  /** Commits that need not wait for the disk, with the WAL fsynced off the event loop. */
  walSync(onError: (e: Error) => void): WalSync {
    return new WalSync(this.opened.db, `${this.opened.path}-wal`, onError);
  }

  /** Deletes the journal's rows older than `retentionMs`. */
  pruner(retentionMs: number): JournalPruner {
    return new JournalPruner(this.opened.db, retentionMs);
  }
}
