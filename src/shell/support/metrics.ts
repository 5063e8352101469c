/**
 * The daemon's metrics (SPEC-0029 REQ-20), on a registry of its own so tests can run several daemons in
 * one process. `rule` label values are capped at 100 per daemon, the overflow folded into `__other__`
 * (SPEC-0013 REQ-5); no label carries a path, run id, digest, expression or message.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EvaluationResult } from "../../core/outcome.js";

export const RULE_LABEL_CAP = 100;
export const OTHER = "__other__";

export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly rules = new Set<string>();

  readonly evaluations = new Counter({
    name: "harness_rule_evaluations_total",
    help: "Rule evaluations by result.",
    labelNames: ["rule", "result"] as const,
    registers: [this.registry],
  });
  readonly fires = new Counter({
    name: "harness_rule_fires_total",
    help: "Rule fires by mode and effective level.",
    labelNames: ["rule", "mode", "level"] as const,
    registers: [this.registry],
  });
  readonly evalDuration = new Histogram({
    name: "harness_rule_eval_duration_seconds",
    help: "Time to evaluate one journal row through every matching rule.",
    buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05],
    registers: [this.registry],
  });
  readonly rulesLoaded = new Gauge({
    name: "harness_rules_loaded",
    help: "Rules of the loaded set by state.",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });
  readonly holdsActive = new Gauge({
    name: "harness_rule_holds_active",
    help: "Holds in force.",
    registers: [this.registry],
  });
  readonly journalRows = new Counter({
    name: "harness_rule_journal_rows_total",
    help: "Rows admitted to the rule journal by source.",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });
  readonly journalDropped = new Counter({
    name: "harness_rule_journal_dropped_total",
    help: "Rows dropped because the journal queue was full, by source.",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });
  readonly journalShareDropped = new Counter({
    name: "harness_rule_journal_share_dropped_total",
    help: "Rows dropped because their harness held its full share of the journal queue, by source (also in harness_rule_journal_dropped_total).",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });
  readonly journalRejected = new Counter({
    name: "harness_rule_journal_rejected_total",
    help: "Events Append refused, by source and reason (a closed set: REFUSAL_REASONS in core/admission.ts).",
    labelNames: ["source", "reason"] as const,
    registers: [this.registry],
  });
  readonly journalLag = new Gauge({
    name: "harness_rule_journal_lag_seconds",
    help: "The daemon clock minus the at of the last evaluated row.",
    registers: [this.registry],
  });
  readonly proposals = new Counter({
    name: "harness_rule_proposals_total",
    help: "propose_rule calls by result.",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly connectionsRefused = new Counter({
    name: "harness_connections_refused_total",
    help: "Connections a listener closed at once because it had its most open (socket, tcp, hooks_http, gateway).",
    labelNames: ["listener"] as const,
    registers: [this.registry],
  });
  readonly gatewaySessionsRefused = new Counter({
    name: "harness_gateway_sessions_refused_total",
    help: "Gateway sessions refused because the gateway had its most sessions open.",
    registers: [this.registry],
  });
  readonly journalReadsRefused = new Counter({
    name: "harness_journal_reads_refused_total",
    help: "query_journal, count_journal and JournalQueryService calls refused: queue_full, caller_busy or timeout.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly hookCallsUnauthenticated = new Counter({
    name: "harness_hook_unauthenticated_total",
    help: "Hook calls answered 401 from their headers alone, their body not read.",
    registers: [this.registry],
  });
  readonly otelExported = new Counter({
    name: "harness_otel_exported_total",
    help: "Decision log records the OTLP collector accepted.",
    registers: [this.registry],
  });
  readonly otelDropped = new Counter({
    name: "harness_otel_dropped_total",
    help: "Decision log records dropped: queue_full (the bounded queue was full), export_failed, or stopped (still unsent when the export stopped).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly notifyDeliveries = new Counter({
    name: "harness_notify_deliveries_total",
    help: "Notify hook deliveries by event and result.",
    labelNames: ["event", "result"] as const,
    registers: [this.registry],
  });
  // The agent hooks' git facts (agents/ingest/git-facts.ts): its pool of git processes and its cache.
  readonly gitFacts = new Counter({
    name: "harness_agent_git_facts_total",
    help: "Hook calls' git facts by how they were found: cached, read, late (the wait ran out), saturated (the pool's queue was full), none (no repository).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly gitChildren = new Gauge({
    name: "harness_agent_git_children",
    help: "Git processes the hook git facts pool runs now.",
    registers: [this.registry],
  });
  readonly gitQueued = new Gauge({
    name: "harness_agent_git_queued",
    help: "Git facts reads waiting for the pool.",
    registers: [this.registry],
  });
  readonly gitCached = new Gauge({
    name: "harness_agent_git_cached_repos",
    help: "Repositories whose git facts are cached.",
    registers: [this.registry],
  });
  /**
   * Who leads among the daemons on the store (decision 0022), read at each scrape: whether this daemon
   * does, and the leader it last knew, its epoch and since when.
   */
  watchLeader(
    read: () => {
      readonly leading: boolean;
      readonly leader:
        | { readonly holder: string; readonly epoch: number; readonly since: number }
        | undefined;
    },
  ): void {
    const registers = [this.registry];
    new Gauge({
      name: "harness_rule_leading",
      help: "1 while this daemon leads (evaluates and acts), 0 while it follows.",
      registers,
      collect() {
        this.set(read().leading ? 1 : 0);
      },
    });
    new Gauge({
      name: "harness_rule_leader_epoch",
      help: "The lease's epoch of the leader this daemon last knew (raised by each takeover).",
      registers,
      collect() {
        this.set(read().leader?.epoch ?? 0);
      },
    });
    new Gauge({
      name: "harness_rule_leader_since_seconds",
      help: "When the leader this daemon last knew took the lease, Unix seconds.",
      registers,
      collect() {
        this.set((read().leader?.since ?? 0) / 1000);
      },
    });
    new Gauge({
      name: "harness_rule_leader_info",
      help: "The leader this daemon last knew, by the name it gives itself.",
      labelNames: ["leader"] as const,
      registers,
      collect() {
        this.reset();
        const leader = read().leader;
        if (leader !== undefined) this.set({ leader: leader.holder }, 1);
      },
    });
  }

  /**
   * Evaluations counted since the last `flushEvaluations`, by rule then result. A row evaluates dozens
   * of rules, and one labelled `inc` costs about 450 ns (prom-client hashes the labels on every call):
   * as much as evaluating the rules. Counting here and adding once per (rule, result) per step does not.
   */
  private readonly pendingEvaluations = new Map<string, Map<EvaluationResult, number>>();

  countEvaluation(rule: string, result: EvaluationResult): void {
    let byResult = this.pendingEvaluations.get(rule);
    if (byResult === undefined) {
      byResult = new Map();
      this.pendingEvaluations.set(rule, byResult);
    }
    byResult.set(result, (byResult.get(result) ?? 0) + 1);
  }

  /** Adds the evaluations counted since the last flush to `harness_rule_evaluations_total`. */
  flushEvaluations(): void {
    for (const [rule, byResult] of this.pendingEvaluations)
      for (const [result, n] of byResult) this.evaluations.inc({ rule: this.rule(rule), result }, n);
    this.pendingEvaluations.clear();
  }

  /** The rule's label value: its name while fewer than 100 names are in use, then `__other__`. */
  rule(name: string): string {
    if (this.rules.has(name)) return name;
    if (this.rules.size >= RULE_LABEL_CAP) return OTHER;
    this.rules.add(name);
    return name;
  }
}
