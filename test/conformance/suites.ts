/** The cel-spec conformance data (`@bufbuild/cel-spec`), flattened to one list of cases per suite. */
import {
  getConformanceSuite,
  getParsingSuite,
  type IncrementalTest,
  type IncrementalTestSuite,
} from "@bufbuild/cel-spec/testdata/tests.js";

export interface Case {
  /** `suite/section/…/name`, unique within the data. */
  readonly path: string;
  readonly section: string;
  readonly test: IncrementalTest;
}

function flatten(suite: IncrementalTestSuite, prefix: string[] = []): Case[] {
  const path = [...prefix, suite.name];
  const seen = new Map<string, number>();
  const out: Case[] = [];
  for (const test of suite.tests) {
    // Several parsing cases share an expression; number repeats so every path is unique.
    const base = `${path.join("/")}/${test.name}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.push({ path: n === 0 ? base : `${base} #${n + 1}`, section: path[1] ?? path[0] ?? "", test });
  }
  for (const child of suite.suites) out.push(...flatten(child, path));
  return out;
}

export function parsingCases(): { readonly suite: string; readonly cases: readonly Case[] }[] {
  return [
    { suite: "parsing", cases: flatten(getParsingSuite()) },
    { suite: "conformance", cases: flatten(getConformanceSuite()) },
  ];
}

export function conformanceCases(): readonly Case[] {
  return flatten(getConformanceSuite());
}
