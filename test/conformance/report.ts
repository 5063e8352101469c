/** Runs every conformance phase and summarises it; shared by `npm run conformance` and the tests. */
import { type EvalCaseResult, runEvalCase } from "./eval-conformance.js";
import { KNOWN_EVAL_FAILURES, KNOWN_PARSE_FAILURES } from "./known-failures.js";
import { classify, type ParseCaseResult, type ParseOutcome } from "./parse-conformance.js";
import { conformanceCases, parsingCases } from "./suites.js";

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

export interface EvalReport {
  readonly results: readonly EvalCaseResult[];
  readonly total: number;
  readonly passed: number;
  readonly knownFailures: number;
  readonly notApplicable: number;
  readonly sections: Readonly<Record<string, { passed: number; total: number; notApplicable: number }>>;
  /** Result types compared with the reference checker's. */
  readonly check: { readonly passed: number; readonly total: number };
}

export function evalReport(): EvalReport {
  const results = conformanceCases().map(runEvalCase);
  const sections: Record<string, { passed: number; total: number; notApplicable: number }> = {};
  for (const r of results) {
    const name = r.path.split("/")[1] ?? "";
    const s = sections[name] ?? { passed: 0, total: 0, notApplicable: 0 };
    sections[name] = s;
    if (r.outcome === "not_applicable") s.notApplicable++;
    else {
      s.total++;
      if (r.outcome === "pass") s.passed++;
    }
  }
  const compared = results.filter((r) => r.typeMatches !== undefined);
  return {
    results,
    total: results.filter((r) => r.outcome !== "not_applicable").length,
    passed: results.filter((r) => r.outcome === "pass").length,
    knownFailures: results.filter((r) => Object.hasOwn(KNOWN_EVAL_FAILURES, r.path)).length,
    notApplicable: results.filter((r) => r.outcome === "not_applicable").length,
    sections,
    check: { passed: compared.filter((r) => r.typeMatches).length, total: compared.length },
  };
}
