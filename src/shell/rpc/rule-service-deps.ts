/**
 * What RuleService's handlers are given (`rule-service.ts`): the evaluator's rule set and its state as
 * last committed, the store's reads, the journal metrics, and the daemon's control callbacks. Each part
 * of the service takes only the fields it uses.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ReloadFailure, ReloadReport } from "../daemon/daemon.js";
import type { EvaluatorView } from "../daemon/evaluator-view.js";
import type { LeaderRecord } from "../store/leadership.js";
import type { RuleReadsPort } from "../store/store-door.js";
import type { StoreWriteFailure } from "../store/store-write-health.js";
import type { DaemonMetrics } from "../support/metrics.js";
import type { RuleService } from "./gen/harness/v1/rules_pb.js";

export type RuleServiceImpl = ServiceImpl<typeof RuleService>;

export interface RuleServiceDeps {
  readonly evaluator: EvaluatorView;
  /** The store's fire log, actions, annotations and holds, through the daemon's store door. */
  readonly reads: RuleReadsPort;
  readonly metrics: Pick<DaemonMetrics, "journalRows" | "journalDropped">;
  /** The daemon's clock, ms. */
  readonly clock: () => number;
  readonly startedAt: number;
  readonly version: string;
  /** Whether the config in force has a `[supervisor] stop` command. */
  readonly supervisorStopConfigured: () => boolean;
  /** `harness rules clear`: releases and commits the holds on `harness` (by `rule`, if given). */
  readonly clear: (harness: string, rule: string | undefined, by: string | undefined) => void;
  /**
   * `harness reload`; rejects when the config cannot be read (or is gone and `defaults` is false),
   * leaving the set in force.
   */
  readonly reload: (defaults: boolean, by: string | undefined) => Promise<ReloadReport>;
  /** Why the last reload failed, until one succeeds. */
  readonly lastReloadFailure?: () => ReloadFailure | undefined;
  /** `harness policy sync` after a fast-forward: a reload with the synced clone; rejects an unknown repo. */
  readonly policySynced: (repo: string, commit: string, by: string | undefined) => Promise<ReloadReport>;
  /** The config keys the last reload found changed that only a restart applies. */
  readonly needsRestart: () => readonly string[];
  /** The store's file, and its last write's failure while no later write succeeded. */
  readonly storeWrite: () => { readonly path: string; readonly failure: StoreWriteFailure | undefined };
  /**
   * Who leads among the daemons on the store, read now (decision 0022), and why this one does not;
   * rejects when the store does not answer.
   */
  readonly leader: () => Promise<{
    readonly leading: boolean;
    readonly leader: LeaderRecord | undefined;
    readonly notLeading: string | undefined;
  }>;
  /** Each declared policy repo's clone as the last load found it (REQ-2's gate), in name order. */
  readonly policyClones: () => readonly {
    readonly name: string;
    readonly state: string;
    readonly detail: string;
  }[];
}
