/**
 * `harness rules lint [<dir>]` (SPEC-0029 REQ-21): a policy repo's CI check. It reads the checkout
 * and nothing else (no config, no store, no daemon, no network, no credential), prints each finding
 * as `<file>:<line>:<column>: <severity>: <reason>: <message>` or, with `--json`, the same as a list,
 * and exits 0 without errors, 1 with any (or any warning under `--strict`), 2 when it cannot read the
 * directory.
 */
import { failsCheck, formatFinding, sortFindings } from "../../lint/findings.js";
import { lintCheckout } from "../../lint/lint-checkout.js";
import { EXIT, type Io } from "../io.js";

export interface LintOptions {
  readonly json?: boolean | undefined;
  readonly strict?: boolean | undefined;
}

export function runLint(dir: string, options: LintOptions, io: Io): number {
  const result = lintCheckout(dir);
  if (!result.ok) {
    io.err(`harness rules lint: ${result.error}`);
    return EXIT.usage;
  }
  const findings = sortFindings(result.findings);
  if (options.json === true) io.out(JSON.stringify(findings));
  else {
    for (const f of findings) io.out(formatFinding(f));
    const count = (s: string) => findings.filter((f) => f.severity === s).length;
    io.err(
      `${result.ruleFiles} rule file${result.ruleFiles === 1 ? "" : "s"}: ${count("error")} errors, ${count("warning")} warnings, ${count("notice")} notices${options.strict === true ? " (strict: warnings fail)" : ""}`,
    );
  }
  return failsCheck(findings, options.strict === true) ? EXIT.failed : EXIT.ok;
}
