/**
 * What `harness rules lint` reports (SPEC-0029 REQ-21): one finding per problem, each with a file
 * (relative to the checkout), a position, a severity and a reason, printed as
 * `<file>:<line>:<column>: <severity>: <reason>: <message>` or as a JSON list of the same objects.
 */
import type { DisableReason } from "../../core/rule-file.js";

export type Severity = "error" | "warning" | "notice";

/**
 * A rule file's loader verdicts keep the daemon's own reasons (`DisableReason`), so lint and
 * `harness rules list` name a broken rule alike; the rest are lint's own.
 */
export type LintReason =
  | Exclude<DisableReason, "cost_exceeded" | "operator">
  | "unreadable"
  | "ignored"
  | "starter_override"
  | "needs_enforce"
  | "unknown_value"
  | "never_true"
  | "always_true"
  | "selector_never_matches"
  | "weights_format"
  | "weights_hash"
  | "test_format"
  | "test_failed";

export interface Finding {
  /** Relative to the checkout, with `/` separators: `rules/churn.toml`. */
  readonly file: string;
  /** 1-based; a finding about the whole file (too large, not UTF-8, a missing key) stands at 1:1. */
  readonly line: number;
  readonly column: number;
  readonly severity: Severity;
  readonly reason: LintReason;
  readonly message: string;
}

export function finding(
  file: string,
  position: { readonly line?: number | undefined; readonly column?: number | undefined } | undefined,
  severity: Severity,
  reason: LintReason,
  message: string,
): Finding {
  return { file, line: position?.line ?? 1, column: position?.column ?? 1, severity, reason, message };
}

/** One line per finding; a message's own line breaks are flattened so each finding stays one line. */
export function formatFinding(f: Finding): string {
  return `${f.file}:${f.line}:${f.column}: ${f.severity}: ${f.reason}: ${f.message.replace(/\s*[\r\n]+\s*/g, " ")}`;
}

/** In file order, then by position, so output is stable from run to run. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column ||
      (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0),
  );
}

/** Whether the findings fail the check: any error, or under `--strict` any warning. */
export function failsCheck(findings: readonly Finding[], strict: boolean): boolean {
  return findings.some((f) => f.severity === "error" || (strict && f.severity === "warning"));
}
