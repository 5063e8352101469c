/**
 * A rule spec to a loaded rule, or to the reason it is disabled (SPEC-0029 REQ-4 to REQ-6, REQ-9's
 * hash): compile `when` against its kind's environment, require `bool`, apply the nesting limit and the
 * primitives' literal rules, and refuse an estimated cost over the per-evaluation limit. Lint and the
 * daemon both load through here, so a file lint accepts loads, and one the daemon disables fails lint
 * with the same reason.
 */
import { createHash } from "node:crypto";
import { compile, comprehensionNestingLimit, type Diagnostic, type Program, print, T } from "../cel/index.js";
import { ENVIRONMENTS } from "./environments.js";
import { primitiveRules } from "./primitive-rules.js";
import { canonicalCooldown, type RuleProblem, type RuleSpec } from "./rule-file.js";
import { locateInStringValue } from "./toml-string-map.js";

/** Per-evaluation cost limit, in cel-go's units (REQ-6). */
export const COST_LIMIT = 5_000;
export const COMPREHENSION_NESTING_LIMIT = 2;

export interface LoadedRule {
  readonly spec: RuleSpec;
  readonly program: Program;
  /** REQ-9's content hash, hex SHA-256: the rule's identity for shadow mode and cooldowns. */
  readonly hash: string;
  /** The normalized `when`, as hashed. */
  readonly normalizedWhen: string;
  readonly estimatedCost: { readonly min: bigint; readonly max: bigint };
}

export type RuleLoad =
  | { readonly ok: true; readonly rule: LoadedRule }
  | { readonly ok: false; readonly problem: RuleProblem };

export function compileRule(spec: RuleSpec): RuleLoad {
  const env = ENVIRONMENTS[spec.on];
  const compiled = compile(spec.when, env, {
    description: `${spec.file}:when`,
    resultType: T.bool,
    validators: [comprehensionNestingLimit(COMPREHENSION_NESTING_LIMIT), primitiveRules],
  });
  if (!compiled.ok) {
    const first = compiled.errors[0] as Diagnostic;
    return {
      ok: false,
      problem: {
        reason: "compile",
        file: spec.file,
        key: "when",
        ...filePosition(spec, first.offset),
        message: first.message,
      },
    };
  }
  const program = compiled.program;
  const estimatedCost = program.estimateCost();
  if (estimatedCost.max > BigInt(COST_LIMIT)) {
    const message = `estimated cost up to ${estimatedCost.max} exceeds the limit of ${COST_LIMIT}`;
    return {
      ok: false,
      problem: {
        reason: "cost_estimate",
        file: spec.file,
        key: "when",
        ...filePosition(spec, undefined),
        message,
      },
    };
  }
  const normalizedWhen = print(program.checked);
  return {
    ok: true,
    rule: { spec, program, hash: contentHash(spec, normalizedWhen), normalizedWhen, estimatedCost },
  };
}

/**
 * REQ-9: SHA-256 over `on`, the normalized `when`, `level`, `target` and the canonical cooldown, and
 * nothing else: rewording the description or message keeps a rule's clock; changing what it does
 * starts it over.
 */
export function contentHash(spec: RuleSpec, normalizedWhen: string): string {
  const canonical = JSON.stringify([
    "harness-rules/v1",
    spec.on,
    normalizedWhen,
    spec.level,
    spec.target,
    canonicalCooldown(spec),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}

/**
 * REQ-16's expression hash, hex SHA-256 over `on` and the normalized `when` alone: what a rule tests,
 * whatever it does when it fires. A proposal whose pull request was closed unmerged is remembered by it,
 * so the same test under a new name, level or message is not proposed to that repo again.
 */
export function expressionHash(on: RuleSpec["on"], normalizedWhen: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["harness-rules/expression/v1", on, normalizedWhen]))
    .digest("hex");
}

/**
 * A position inside `when` (a UTF-16 offset of the decoded text) as a line and column of the file,
 * through the string's quoting and escapes; without an offset, where `when`'s text starts.
 */
function filePosition(spec: RuleSpec, offset: number | undefined): { line?: number; column?: number } {
  const source = spec.whenSource;
  if (source === undefined) return {};
  if (offset === undefined) return { line: source.line, column: source.column };
  return locateInStringValue(source, offset);
}
