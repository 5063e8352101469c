/**
 * The store behind one door, whichever backend holds it (decision 0020): every object the daemon and
 * its services read and write the store through, each asynchronous, answering alike on SQLite
 * (`sqlite-store-door.ts`, the embedded default) and PostgreSQL (`pg/pg-store-door.ts`, `[store] url`).
 * The composition root opens one and hands its objects out; nothing else knows which backend it is,
 * but for what runs beside the store in other processes (backtests, journal queries), which the root
 * chooses by `backend`.
 */
import type { JournalRow } from "../../core/journal.js";
import type { CoreState } from "../../core/state.js";
import type { AgentReads } from "./agent-reads.js";
import type { AgentRunReads } from "./agent-run-reads.js";
import type { AgentRunStops } from "./agent-run-stops.js";
import type { AgentSessionRuns } from "./agent-session-runs.js";
import type { AgentTold } from "./agent-told.js";
import type { AsyncPort } from "./async-port.js";
import type { DecisionStore } from "./decision-store.js";
import type { DerivedCursors } from "./derived-cursors.js";
import type { EvidenceReads } from "./evidence-reads.js";
import type { JournalTable } from "./journal-table.js";
import type { LastGoodCommits } from "./last-good-commits.js";
import type { NotifyCooldowns } from "./notify-cooldowns.js";
import type { ProposalStore } from "./proposal-store.js";
import type { JournalPruner } from "./retention.js";
import type { RuleReads } from "./rule-reads.js";
import type { TokenStore } from "./token-store.js";
import type { EvaluatorLog, JournalLog } from "./write-ports.js";

/** The journal's reads outside the write path: the derivers' and RuleService's. */
export interface JournalReads
  extends AsyncPort<Pick<JournalTable, "last" | "rowsAfter" | "firstAdmittedAfter" | "atOf">> {
  /** Rows `fromSeq`..`toSeq` in seq order, read a page at a time. */
  rowsInRange(fromSeq: number, toSeq: number): AsyncIterable<JournalRow>;
}

/** RuleService's reads, with the journal's own. */
export type RuleReadsPort = AsyncPort<Omit<RuleReads, "journal">> & {
  readonly journal: AsyncPort<Pick<JournalTable, "firstAdmittedAfter" | "last">>;
};

/** The decisions outside the evaluator's commit: the holds in force, actions' progress, settling at start. */
export type DecisionsPort = AsyncPort<
  Pick<DecisionStore, "activeHolds" | "setActionState" | "startAction" | "settleInterrupted">
>;

/** The write path's doors, sharing one way of committing without waiting for the disk. */
export interface WritePath {
  readonly journal: JournalLog;
  readonly evaluator: EvaluatorLog;
  /** Ends what commits without waiting for the disk leave behind (SQLite's WAL fsync off the loop). */
  close(): Promise<void>;
}

export interface StoreDoor {
  readonly backend: "sqlite" | "postgres";
  /** The store as messages name it: its file, or `postgresql host/db` (never a password). */
  readonly label: string;
  /** The journal writer's and the evaluator's doors; `onSyncError`: a deferred sync of the disk failed. */
  writePath(onSyncError: (e: Error) => void): WritePath;
  readonly journal: JournalReads;
  readonly decisions: DecisionsPort;
  readonly ruleReads: RuleReadsPort;
  readonly proposals: AsyncPort<ProposalStore>;
  readonly evidence: AsyncPort<EvidenceReads>;
  readonly tokens: AsyncPort<TokenStore>;
  readonly agents: AsyncPort<AgentReads>;
  readonly agentRuns: AsyncPort<AgentRunReads>;
  readonly agentRunStops: AsyncPort<AgentRunStops>;
  readonly agentTold: AsyncPort<AgentTold>;
  readonly agentSessionRuns: AsyncPort<AgentSessionRuns>;
  readonly cursors: AsyncPort<DerivedCursors>;
  readonly lastGoodCommits: AsyncPort<LastGoodCommits>;
  readonly notifyCooldowns: AsyncPort<NotifyCooldowns>;
  /** Every hash's shadow record as committed. */
  shadows(): Promise<CoreState["shadows"]>;
  /** Deletes the journal's rows older than `retentionMs`, a batch at a time. */
  pruner(retentionMs: number): AsyncPort<JournalPruner>;
  /** Closes the store: SQLite's connection, PostgreSQL's pool. */
  close(): Promise<void>;
}
