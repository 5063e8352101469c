/**
 * Linting the rule files of a checkout (SPEC-0029 REQ-21): each top-level `rules/<name>.toml` goes
 * through the daemon's own loader (`loadRuleFileBytes`: the size limit, UTF-8, the schema check, the
 * kind's environment, the validators and the cost estimate) and the daemon's own assembly with the
 * starter pack, so a file lint accepts loads and one the daemon would disable fails with its reason.
 * Then what only lint says: two files of one name, a starter override, a level that needs `enforce`,
 * and the advice of `rule-advice.ts`.
 */
import type { LoadedRule, RuleLoad } from "../../core/compile-rule.js";
import { loadRuleFileBytes } from "../../core/load-rule.js";
import { assembleRuleSet, needsEnforce } from "../../core/rule-set.js";
import { loadStarterPack } from "../../core/starter-pack.js";
import { locateInStringValue } from "../../core/toml-string-map.js";
import { scanPositions } from "../config/toml-positions.js";
import { type Finding, finding } from "./findings.js";
import { adviseRule } from "./rule-advice.js";

export interface RuleFileInput {
  /** Relative to the checkout: `rules/<name>.toml`. */
  readonly file: string;
  /** At most `MAX_RULE_FILE_BYTES + 1` bytes of it. */
  readonly bytes: Uint8Array;
}

export interface RuleFilesLint {
  readonly findings: readonly Finding[];
  /** The rules that load, by name, for the rule tests. */
  readonly loaded: ReadonlyMap<string, LoadedRule>;
}

/** The repo name lint assembles the checkout under; it appears in no finding. */
const CHECKOUT = "checkout";

export function lintRuleFiles(inputs: readonly RuleFileInput[]): RuleFilesLint {
  const findings: Finding[] = [];
  const loads: RuleLoad[] = inputs.map(({ file, bytes }) => loadRuleFileBytes(file, bytes));
  const textOf = (i: number) => new TextDecoder().decode((inputs[i] as RuleFileInput).bytes);
  const starter = loadStarterPack();
  const starterNames = new Set(starter.flatMap((l) => (l.ok ? [l.rule.spec.name] : [])));
  const set = assembleRuleSet({ starter, policy: [{ repo: CHECKOUT, loads }], shadowPeriod: 0 });

  // The daemon's verdict on each file, with the loader's own position for the problem.
  const problems = new Map(loads.flatMap((l) => (l.ok ? [] : [[l.problem.file, l.problem] as const])));
  for (const d of set.disabled) {
    if (d.source.kind !== "policy") continue;
    if (d.reason === "cost_exceeded" || d.reason === "operator") continue;
    const p = problems.get(d.file);
    findings.push(finding(d.file, p, "error", d.reason, d.message));
  }

  // One name in two files of one checkout: the daemon cannot tell which is meant.
  const byName = new Map<string, number[]>();
  loads.forEach((l, i) => {
    if (l.ok) byName.set(l.rule.spec.name, [...(byName.get(l.rule.spec.name) ?? []), i]);
  });
  const loaded = new Map<string, LoadedRule>();
  for (const [name, indexes] of byName) {
    if (indexes.length > 1) {
      const files = indexes.map((i) => (inputs[i] as RuleFileInput).file);
      for (const i of indexes) {
        const file = (inputs[i] as RuleFileInput).file;
        const others = files.filter((f) => f !== file).join(", ");
        const at = scanPositions(textOf(i)).of(["name"]);
        findings.push(
          finding(file, at, "error", "duplicate_name", `name ${name} is also defined by ${others}`),
        );
      }
      continue;
    }
    const l = loads[indexes[0] as number] as RuleLoad;
    if (l.ok) loaded.set(name, l.rule);
  }

  loads.forEach((l, i) => {
    const file = (inputs[i] as RuleFileInput).file;
    const name = l.ok ? l.rule.spec.name : undefined;
    const base = file
      .split("/")
      .pop()
      ?.replace(/\.toml$/, "");
    const positions = l.ok ? scanPositions(textOf(i)) : undefined;
    if (starterNames.has(name ?? base ?? "")) {
      findings.push(
        finding(
          file,
          positions?.of(["name"]),
          "notice",
          "starter_override",
          `replaces the embedded starter rule ${name ?? base} entirely${l.ok ? "" : "; while this file fails, neither copy is evaluated"}`,
        ),
      );
    }
    if (!l.ok) return;
    const { spec } = l.rule;
    if (needsEnforce(spec.level)) {
      findings.push(
        finding(
          file,
          positions?.of(["level"]),
          "warning",
          "needs_enforce",
          `level ${spec.level} acts at ${spec.level} only when ${spec.name} is listed in [memory.rules] enforce; otherwise it is capped at notify`,
        ),
      );
    }
    for (const a of adviseRule(l.rule)) {
      const at =
        spec.whenSource === undefined
          ? positions?.of(["when"])
          : locateInStringValue(spec.whenSource, a.offset);
      findings.push(finding(file, at, "warning", a.reason, a.message));
    }
  });
  return { findings, loaded };
}
