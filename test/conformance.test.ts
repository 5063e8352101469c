import { describe, expect, it } from "vitest";
import { KNOWN_PARSE_FAILURES } from "./conformance/known-failures.js";
import { parseReport } from "./conformance/report.js";

describe("parse conformance against the cel-spec data", () => {
  const report = parseReport();

  it("agrees with the reference parser on at least 99% of the standard-syntax cases", () => {
    expect(report.total).toBeGreaterThan(2000);
    expect(report.passed / report.total).toBeGreaterThanOrEqual(0.99);
  });

  it("fails only the listed known failures", () => {
    const unexpected = report.results
      .filter((r) => r.outcome === "disagree" && !Object.hasOwn(KNOWN_PARSE_FAILURES, r.path))
      .map((r) => `${r.path}: ${r.detail}`);
    expect(unexpected).toEqual([]);
  });

  it("keeps the known-failure list shrinking: a listed case that now passes must be removed", () => {
    const nowPassing = report.results
      .filter((r) => r.outcome !== "disagree" && Object.hasOwn(KNOWN_PARSE_FAILURES, r.path))
      .map((r) => r.path);
    const missing = Object.keys(KNOWN_PARSE_FAILURES).filter(
      (p) => !report.results.some((r) => r.path === p),
    );
    expect(nowPassing).toEqual([]);
    expect(missing).toEqual([]);
  });

  it("reports option-only rejections apart, with a reason for each", () => {
    const optionOnly = report.results.filter((r) => r.outcome === "option_only");
    expect(optionOnly.length).toBeGreaterThan(0);
    for (const r of optionOnly) expect(r.detail).toMatch(/reference's test|recursion limit/);
  });
});
