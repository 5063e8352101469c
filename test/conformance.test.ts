import { describe, expect, it } from "vitest";
import { KNOWN_EVAL_FAILURES, KNOWN_PARSE_FAILURES } from "./conformance/known-failures.js";
import { evalReport, parseReport } from "./conformance/report.js";

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

describe("evaluation and type-check conformance against the cel-spec data", () => {
  const report = evalReport();

  it("passes at least 99.5% of the standard-environment cases that need no message type", () => {
    expect(report.total).toBeGreaterThan(1000);
    expect(report.passed / report.total).toBeGreaterThanOrEqual(0.995);
  });

  it("fails only the listed known failures, and lists none that now pass", () => {
    const unexpected = report.results
      .filter((r) => r.outcome === "fail" && !Object.hasOwn(KNOWN_EVAL_FAILURES, r.path))
      .map((r) => `${r.path}: ${r.detail}`);
    expect(unexpected).toEqual([]);
    const nowPassing = report.results
      .filter((r) => r.outcome !== "fail" && Object.hasOwn(KNOWN_EVAL_FAILURES, r.path))
      .map((r) => r.path);
    expect(nowPassing).toEqual([]);
  });

  it("computes the reference checker's result type for at least 99% of checked cases", () => {
    expect(report.check.total).toBeGreaterThan(900);
    expect(report.check.passed / report.check.total).toBeGreaterThanOrEqual(0.99);
  });

  it("reports every case it does not run as not applicable, with a reason", () => {
    const na = report.results.filter((r) => r.outcome === "not_applicable");
    expect(na.length + report.total).toBe(report.results.length);
    for (const r of na) expect(r.detail).toBeTruthy();
  });
});
