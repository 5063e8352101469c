/**
 * Parse conformance: for every expression of the parsing and conformance suites, does our parser accept
 * what the reference parser accepts, and build the same AST?
 *
 * Each case lands in one of four outcomes:
 * - `agree`: same accept/reject decision and, when accepted, the same tree (compared as the reference's
 *   debug string);
 * - `disagree`: anything else;
 * - `option_only`: the reference rejected it only because of the options its own tests ran with (a
 *   recursion limit of 32 where our default is 250, backtick identifiers off where ours are on); reported
 *   on their own, never counted as agreement;
 * - `extension`: the expression uses the optional-syntax extension (`a.?b`, `a[?b]`, `[?x]`, `{?k: v}`),
 *   which the standard environment does not have; not applicable. (The data's other extension sections
 *   use ordinary call syntax: the reference data was produced with the standard macros only.)
 */
import { KindAdorner, toDebugString } from "@bufbuild/cel-spec/testdata/to-debug-string.js";
import { parse } from "../../src/cel/index.js";
import type { Case } from "./suites.js";
import { toProto } from "./to-proto.js";

export type ParseOutcome = "agree" | "disagree" | "option_only" | "extension";

export interface ParseCaseResult {
  readonly path: string;
  readonly expr: string;
  readonly outcome: ParseOutcome;
  /** For disagreements and option-only cases: what each side did. */
  readonly detail?: string;
}

const OPTIONAL_SYNTAX = /unsupported syntax '(\.\?|\[\?|\?)'/;
const OPTION_ONLY = [
  {
    pattern: /unsupported syntax: '`'/,
    reason: "backtick identifiers are off in the reference's test options",
  },
  {
    pattern: /recursion limit exceeded: 32|max recursion depth exceeded/,
    reason: "the reference's tests ran with a recursion limit of 32 (our default is 100)",
  },
];

export function debugString(text: string): string | undefined {
  const result = parse(text);
  return result.ok ? toDebugString(toProto(result.ast.expr), KindAdorner.singleton) : undefined;
}

export function classify(c: Case): ParseCaseResult {
  const expr = c.test.original.expr;
  const reference = c.test.ast;
  const result = parse(expr);
  const ours = result.ok ? toDebugString(toProto(result.ast.expr), KindAdorner.singleton) : undefined;
  const base = { path: c.path, expr };
  if (reference !== undefined) {
    if (ours === reference) return { ...base, outcome: "agree" };
    const why = result.ok
      ? `ours:\n${ours}\nreference:\n${reference}`
      : `we reject: ${result.errors[0]?.message}`;
    return { ...base, outcome: "disagree", detail: why };
  }
  const error = c.test.error ?? "";
  if (OPTIONAL_SYNTAX.test(error)) return { ...base, outcome: "extension" };
  const option = OPTION_ONLY.find((o) => o.pattern.test(error));
  if (option !== undefined) {
    return {
      ...base,
      outcome: "option_only",
      detail: `${option.reason}; we ${result.ok ? "accept" : "reject"}`,
    };
  }
  if (!result.ok) return { ...base, outcome: "agree" };
  return { ...base, outcome: "disagree", detail: `we accept; reference: ${error.split("\n")[0]}` };
}
