/**
 * Every decision the daemon takes (daemon/actions.ts's `Decision`), exported as an OpenTelemetry log
 * record over OTLP/HTTP (docs/telemetry.md, decision 0015). The export never holds up evaluation: a
 * record is handed to the SDK's batch processor and the observer returns; at most `maxQueue` records wait,
 * and past that, or when the collector refuses or times out, records are dropped and counted in
 * `harness_otel_dropped_total{reason}`. The journal and the decision store stay the record of truth.
 */
import { type AnyValueMap, type Logger, SeverityNumber } from "@opentelemetry/api-logs";
import type { ExportResult } from "@opentelemetry/core";
import { OTLPLogExporter as JsonExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
  type ReadableLogRecord,
} from "@opentelemetry/sdk-logs";
import { LOOP_THRESHOLD } from "../../core/loop-guard.js";
import type { Action } from "../../core/outcome.js";
import type { Level } from "../../core/rule-file.js";
import type { OtelConfig } from "../config/global-config.js";
import type { Decision, DecisionObserver } from "../daemon/actions.js";
import type { DaemonMetrics } from "../support/metrics.js";

/** A fire's message is the record's body: agent text, so bounded and stripped of control characters. */
export const MAX_BODY_CHARS = 4096;
export const DEFAULT_MAX_QUEUE = 2048;
const SHUTDOWN_MS = 2000;
export const EVENT_NAME = "harness.rule.decision";

export interface DecisionExportOptions {
  readonly config: OtelConfig;
  readonly headers: Readonly<Record<string, string>>;
  readonly metrics: DaemonMetrics;
  /** Resource attributes naming this daemon. */
  readonly serviceInstance: string;
  readonly serviceVersion: string;
  readonly maxQueue?: number;
  /** How long a batch waits before it is sent; a test shortens it. */
  readonly delayMs?: number;
  readonly exportTimeoutMs?: number;
}

export interface DecisionExport {
  readonly observer: DecisionObserver;
  /** Sends what waits (bounded by the export timeout); used at shutdown and by tests. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const SEVERITY: Record<Level, SeverityNumber> = {
  annotate: SeverityNumber.INFO,
  notify: SeverityNumber.WARN,
  hold: SeverityNumber.WARN2,
  stop: SeverityNumber.ERROR,
};

/**
 * The GenAI guardrail conventions' names (semantic-conventions-genai, Development status; the version
 * checked is in docs/telemetry.md), set beside our own where a field of theirs means what ours does.
 * Verdict: what the rule reports, by its effective level; action: what the daemon enforced.
 */
const GUARDRAIL_COMPONENT = "harness-rules";
const VERDICT: Record<Level, string> = {
  annotate: "audit",
  notify: "warn",
  hold: "escalate",
  stop: "deny",
};
const ENFORCED: Partial<Record<Action, string>> = { hold: "escalate", stop: "block" };
/** A tool call about to run, in the conventions' words. */
const TOOL_CALL_TARGET: AnyValueMap = {
  "gen_ai.guardrail.target.type": "input",
  "gen_ai.guardrail.target.subtype": "tool_call",
};

// C0 and C1 controls but tab and newline: a collector's UI or a terminal must not read agent text as
// escapes. One character class: linear.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function boundedBody(message: string): string {
  const cut = message.length > MAX_BODY_CHARS ? `${message.slice(0, MAX_BODY_CHARS)}…[truncated]` : message;
  return cut.replace(CONTROLS, "\uFFFD");
}

/** The record for one decision: its body and attributes (docs/telemetry.md names each). */
export function decisionRecord(d: Decision): {
  body: string;
  severity: SeverityNumber;
  attributes: AnyValueMap;
  at: number;
} {
  switch (d.kind) {
    case "fire": {
      const f = d.fire;
      return {
        body: boundedBody(f.message),
        severity: SEVERITY[f.effectiveLevel],
        at: f.at,
        attributes: {
          "harness.decision": "fire",
          "harness.rule.name": f.rule,
          "harness.rule.content_hash": f.hash,
          "harness.rule.level": f.effectiveLevel,
          "harness.rule.declared_level": f.declaredLevel,
          "harness.rule.mode": f.mode,
          "harness.fire.id": f.id,
          "harness.fire.action": f.action,
          "harness.journal.seq": f.seq,
          "harness.event.kind": f.kind,
          "harness.event.type": f.type,
          ...targetAttributes(f.target?.kind, f.target?.harness, f.target?.run),
          "gen_ai.guardrail.component.name": GUARDRAIL_COMPONENT,
          "gen_ai.guardrail.security.policy.id": f.rule,
          "gen_ai.guardrail.verdict.type": VERDICT[f.effectiveLevel],
          "gen_ai.guardrail.action.type": ENFORCED[f.action] ?? "allow",
        },
      };
    }
    case "hold":
      return {
        body: boundedBody(d.fire.message),
        severity: SeverityNumber.WARN2,
        at: d.fire.at,
        attributes: {
          "harness.decision": "hold",
          "harness.rule.name": d.fire.rule,
          "harness.rule.content_hash": d.fire.hash,
          "harness.rule.mode": d.fire.mode,
          "harness.fire.id": d.fire.id,
          "harness.journal.seq": d.fire.seq,
          "harness.target.harness": d.harness,
          "gen_ai.guardrail.component.name": GUARDRAIL_COMPONENT,
          "gen_ai.guardrail.security.policy.id": d.fire.rule,
          "gen_ai.guardrail.verdict.type": VERDICT.hold,
          "gen_ai.guardrail.action.type": ENFORCED.hold as string,
        },
      };
    case "release":
      return {
        body: `hold by rule ${d.release.rule} released: ${d.release.cause}`,
        severity: SeverityNumber.INFO,
        at: d.at,
        attributes: {
          "harness.decision": "release",
          "harness.rule.name": d.release.rule,
          "harness.fire.id": d.release.fireId,
          "harness.release.cause": d.release.cause,
          "harness.target.harness": d.release.harness,
        },
      };
    case "outcome":
      return {
        body: boundedBody(d.detail ?? ""),
        severity: d.state === "ok" || d.state === "started" ? SeverityNumber.INFO : SeverityNumber.WARN,
        at: d.at,
        attributes: {
          "harness.decision": "action_outcome",
          "harness.fire.id": d.fireId,
          "harness.action": d.action,
          "harness.action.state": d.state,
          ...(d.rule === undefined ? {} : { "harness.rule.name": d.rule }),
          ...(d.seq === undefined ? {} : { "harness.journal.seq": d.seq }),
        },
      };
    case "loop_stop":
      return {
        body: boundedBody(
          `run ${d.run} stopped by the loop guard: ${LOOP_THRESHOLD} identical calls of ${d.tool} in a row`,
        ),
        severity: SeverityNumber.ERROR,
        at: d.at,
        attributes: {
          "harness.decision": "loop_stop",
          "harness.action": "stop",
          "harness.stop.id": `journal:${d.loopSeq}`,
          "harness.journal.seq": d.seq,
          "harness.event.kind": "run_event",
          "harness.event.type": "tool",
          "harness.tool": boundedBody(d.tool),
          ...targetAttributes("run", d.harness, d.run),
          "gen_ai.guardrail.component.name": GUARDRAIL_COMPONENT,
          "gen_ai.guardrail.verdict.type": "deny",
          "gen_ai.guardrail.action.type": "block",
          ...TOOL_CALL_TARGET,
        },
      };
    case "fail_mode":
      return {
        body: boundedBody(
          `tool call ${d.tool} in ${d.run} not judged by the rules (${d.reason}): ${d.result === "deny" ? "refused" : "let through"} by ${d.source === "harness" ? "the harness's --fail mode" : "[agents] on_unreachable"}`,
        ),
        severity: SeverityNumber.WARN,
        at: d.at,
        attributes: {
          "harness.decision": "fail_mode",
          "harness.fail_mode.result": d.result,
          "harness.fail_mode.source": d.source,
          ...(d.seq === undefined ? {} : { "harness.journal.seq": d.seq }),
          "harness.event.kind": "attempt_event",
          "harness.event.type": "tool",
          "harness.tool": boundedBody(d.tool),
          ...targetAttributes("run", d.harness, d.run),
          "gen_ai.guardrail.component.name": GUARDRAIL_COMPONENT,
          "gen_ai.guardrail.action.type": d.result === "deny" ? "block" : "allow",
          ...TOOL_CALL_TARGET,
        },
      };
  }
}

function targetAttributes(
  kind: string | undefined,
  harness: string | undefined,
  run: string | undefined,
): AnyValueMap {
  const a: AnyValueMap = {};
  if (kind !== undefined) a["harness.target.kind"] = kind;
  if (harness !== undefined) a["harness.target.harness"] = harness;
  if (run !== undefined) a["harness.target.run"] = run;
  return a;
}

/** Counts what each batch became; the SDK itself logs failures through the OTel diag API only. */
class CountingExporter implements LogRecordExporter {
  constructor(
    private readonly inner: LogRecordExporter,
    private readonly settled: (n: number, ok: boolean) => void,
  ) {}
  export(logs: ReadableLogRecord[], done: (result: ExportResult) => void): void {
    this.inner.export(logs, (result) => {
      this.settled(logs.length, result.code === 0);
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
}

export function startDecisionExport(o: DecisionExportOptions): DecisionExport {
  const maxQueue = o.maxQueue ?? DEFAULT_MAX_QUEUE;
  const timeoutMillis = o.exportTimeoutMs ?? 10_000;
  const exporterOptions = { url: o.config.endpoint, headers: { ...o.headers }, timeoutMillis };
  const inner =
    o.config.protocol === "http/json"
      ? new JsonExporter(exporterOptions)
      : new ProtoExporter(exporterOptions);
  // Records handed to the SDK and not yet exported or failed: the bound this module enforces itself, so
  // every drop is counted (the SDK's own queue drops silently).
  let waiting = 0;
  // Set once the export has stopped: what still waited then was counted dropped, and a batch that
  // settles later must not be counted again.
  let stopped = false;
  const exporter = new CountingExporter(inner, (n, ok) => {
    if (stopped) return;
    waiting -= n;
    if (ok) o.metrics.otelExported.inc(n);
    else o.metrics.otelDropped.inc({ reason: "export_failed" }, n);
  });
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({
      "service.name": "harness-rules",
      "service.version": o.serviceVersion,
      "service.instance.id": o.serviceInstance,
    }),
    processors: [
      new BatchLogRecordProcessor({
        exporter,
        maxQueueSize: maxQueue,
        maxExportBatchSize: Math.min(512, maxQueue),
        scheduledDelayMillis: o.delayMs ?? 1000,
        exportTimeoutMillis: timeoutMillis,
      }),
    ],
  });
  const logger: Logger = provider.getLogger("harness-rules.decisions");
  const observer: DecisionObserver = (d) => {
    if (waiting >= maxQueue) {
      o.metrics.otelDropped.inc({ reason: "queue_full" });
      return;
    }
    waiting++;
    const r = decisionRecord(d);
    logger.emit({
      eventName: EVENT_NAME,
      timestamp: r.at,
      severityNumber: r.severity,
      severityText: SeverityNumber[r.severity],
      body: r.body,
      attributes: r.attributes,
    });
  };
  return {
    observer,
    flush: () => provider.forceFlush(),
    // A collector that is down must not hold up the daemon's stop: what has not gone by then is lost,
    // and counted.
    shutdown: () =>
      new Promise<void>((resolve) => {
        const stop = () => {
          if (!stopped && waiting > 0) o.metrics.otelDropped.inc({ reason: "stopped" }, waiting);
          stopped = true;
          waiting = 0;
          resolve();
        };
        const timer = setTimeout(stop, SHUTDOWN_MS);
        timer.unref();
        provider.shutdown().then(() => {
          clearTimeout(timer);
          stop();
        }, stop);
      }),
  };
}
