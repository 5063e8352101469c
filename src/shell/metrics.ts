/**
 * The daemon's metrics (SPEC-0029 REQ-20), on a registry of its own so tests can run several daemons in
 * one process. `rule` label values are capped at 100 per daemon, the overflow folded into `__other__`
 * (SPEC-0013 REQ-5); no label carries a path, run id, digest, expression or message.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

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
  readonly notifyDeliveries = new Counter({
    name: "harness_notify_deliveries_total",
    help: "Notify hook deliveries by event and result.",
    labelNames: ["event", "result"] as const,
    registers: [this.registry],
  });
  /** The rule's label value: its name while fewer than 100 names are in use, then `__other__`. */
  rule(name: string): string {
    if (this.rules.has(name)) return name;
    if (this.rules.size >= RULE_LABEL_CAP) return OTHER;
    this.rules.add(name);
    return name;
  }
}
