/** Runs every conformance phase and summarises it; shared by `npm run conformance` and the tests. */
import { KNOWN_PARSE_FAILURES } from "./known-failures.js";
import { classify, type ParseCaseResult, type ParseOutcome } from "./parse-conformance.js";
import { parsingCases } from "./suites.js";

export interface SuiteSummary {
  readonly suite: string;
  readonly counts: Readonly<Record<ParseOutcome, number>>;
}

export interface ParseReport {
  readonly suites: readonly SuiteSummary[];
  readonly results: readonly ParseCaseResult[];
  /** Cases counted for the score: everything but extension syntax and option-only rejections. */
  readonly total: number;
  readonly passed: number;
  readonly knownFailures: number;
  readonly optionOnly: number;
  readonly extension: number;
}

export function parseReport(): ParseReport {
  const suites: SuiteSummary[] = [];
  const results: ParseCaseResult[] = [];
  for (const { suite, cases } of parsingCases()) {
    const counts: Record<ParseOutcome, number> = { agree: 0, disagree: 0, option_only: 0, extension: 0 };
    for (const c of cases) {
      const r = classify(c);
      counts[r.outcome]++;
      results.push(r);
    }
    suites.push({ suite, counts });
  }
  const count = (o: ParseOutcome) => results.filter((r) => r.outcome === o).length;
  const passed = count("agree");
  return {
    suites,
    results,
    total: passed + count("disagree"),
    passed,
    knownFailures: results.filter((r) => Object.hasOwn(KNOWN_PARSE_FAILURES, r.path)).length,
    optionOnly: count("option_only"),
    extension: count("extension"),
  };
}
