/**
 * `npm run conformance [-- --json] [-- --failures]`: the conformance scores, as tables or as one JSON
 * object `{"parse": {...}, "eval": {...}, "check": {...}}`.
 */
import { evalReport, parseReport } from "./report.js";

const parse = parseReport();
const evaluation = evalReport();
const summary = {
  parse: {
    passed: parse.passed,
    total: parse.total,
    knownFailures: parse.knownFailures,
    optionOnly: parse.optionOnly,
    notApplicable: parse.extension,
    suites: Object.fromEntries(parse.suites.map((s) => [s.suite, s.counts])),
  },
  eval: {
    passed: evaluation.passed,
    total: evaluation.total,
    knownFailures: evaluation.knownFailures,
    notApplicable: evaluation.notApplicable,
    sections: evaluation.sections,
  },
  check: evaluation.check,
};

const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(2)}%`;

function table(rows: string[][]): void {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  "));
}

if (process.argv.includes("--json")) {
  console.log(JSON.stringify(summary));
} else {
  table([
    ["parse suite", "agree", "disagree", "option-only", "extension (n/a)"],
    ...parse.suites.map((s) => [
      s.suite,
      ...[s.counts.agree, s.counts.disagree, s.counts.option_only, s.counts.extension].map(String),
    ]),
  ]);
  console.log(
    `parse: ${parse.passed}/${parse.total} agree (${pct(parse.passed, parse.total)}), ${parse.knownFailures} known failures, ${parse.optionOnly} option-only rejections reported apart\n`,
  );
  table([
    ["eval section", "passed", "total", "n/a"],
    ...Object.entries(evaluation.sections).map(([name, s]) => [
      name,
      String(s.passed),
      String(s.total),
      String(s.notApplicable),
    ]),
  ]);
  console.log(
    `eval: ${evaluation.passed}/${evaluation.total} (${pct(evaluation.passed, evaluation.total)}), ${evaluation.knownFailures} known failures, ${evaluation.notApplicable} not applicable`,
  );
  console.log(
    `check: result type equals the reference checker's in ${evaluation.check.passed}/${evaluation.check.total} (${pct(evaluation.check.passed, evaluation.check.total)})`,
  );
  if (process.argv.includes("--failures")) {
    for (const r of parse.results)
      if (r.outcome === "disagree") console.log(`\nPARSE ${r.path}\n  ${r.expr}\n  ${r.detail}`);
    for (const r of evaluation.results) {
      if (r.outcome === "fail") console.log(`\nEVAL ${r.path}\n  ${r.expr}\n  ${r.detail}`);
      else if (r.typeMatches === false) console.log(`\nTYPE ${r.path}\n  ${r.expr}\n  ${r.typeDetail}`);
    }
  }
}
