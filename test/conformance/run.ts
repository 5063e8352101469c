/**
 * `npm run conformance [-- --json]`: the conformance scores, as a table or as one JSON object
 * `{"parse": {"passed": N, "total": M, "knownFailures": K, …}}`.
 */
import { parseReport } from "./report.js";

const report = parseReport();
const parse = {
  passed: report.passed,
  total: report.total,
  knownFailures: report.knownFailures,
  optionOnly: report.optionOnly,
  notApplicable: report.extension,
  suites: Object.fromEntries(report.suites.map((s) => [s.suite, s.counts])),
};

if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ parse }));
} else {
  const rows = [["suite", "agree", "disagree", "option-only", "extension (n/a)"]];
  for (const s of report.suites) {
    const c = s.counts;
    rows.push([s.suite, `${c.agree}`, `${c.disagree}`, `${c.option_only}`, `${c.extension}`]);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  "));
  const pct = ((100 * report.passed) / report.total).toFixed(2);
  console.log(
    `\nparse: ${report.passed}/${report.total} agree (${pct}%), ${report.knownFailures} known failures`,
  );
  console.log(`option-only rejections (reported apart, not scored): ${report.optionOnly}`);
  for (const r of report.results) {
    if (r.outcome === "disagree") console.log(`\nDISAGREE ${r.path}\n  ${r.expr}\n  ${r.detail}`);
  }
}
