/**
 * Advice on a proposal at store time: what a reviewer would ask first (does a rule in force already do
 * this, does it ever fire, does it replace a starter rule). Told in propose_rule's result and never a
 * refusal: REQ-15's list of rejections is closed.
 */
import type { ActiveRule } from "../../core/active-rule.js";
import { expressionHash } from "../../core/compile-rule.js";
import type { RuleSet } from "../../core/rule-set.js";
import { loadStarterPack } from "../../core/starter-pack.js";

export type ProposalAdviceKind = "duplicate_expression" | "duplicate_when" | "no_fires" | "starter_override";

export interface ProposalAdvice {
  readonly kind: ProposalAdviceKind;
  /** One sentence for the agent, naming what to do about it. */
  readonly message: string;
  /** The loaded rule it concerns (the duplicates and the starter override). */
  readonly rule?: string;
}

/** The proposal as loaded and backtested: what the advice compares with the rules in force. */
export interface AdvisedProposal {
  readonly name: string;
  readonly on: string;
  /** `when` as the CEL printer prints it: whitespace and comments do not tell two rules apart. */
  readonly normalizedWhen: string;
  readonly contentHash: string;
  readonly expressionHash: string;
  readonly backtest: { readonly sinceMs: number; readonly fires: number };
}

/** The most rules one kind of duplicate names: more say nothing the first ones do not. */
const MAX_NAMED = 5;
const DAY_MS = 86_400_000;

export function proposalAdvice(p: AdvisedProposal, rules: RuleSet): ProposalAdvice[] {
  const advice: ProposalAdvice[] = [];
  const inForce = rules.rules.map((r) => ({
    r,
    hash: expressionHash(r.rule.spec.on, r.rule.normalizedWhen),
  }));
  for (const { r } of inForce.filter(({ hash }) => hash === p.expressionHash).slice(0, MAX_NAMED))
    advice.push({ kind: "duplicate_expression", rule: r.rule.spec.name, message: sameExpression(p, r) });
  for (const { r } of inForce
    .filter(({ r, hash }) => hash !== p.expressionHash && r.rule.normalizedWhen === p.normalizedWhen)
    .slice(0, MAX_NAMED))
    advice.push({ kind: "duplicate_when", rule: r.rule.spec.name, message: sameWhen(p, r) });
  if (p.backtest.fires === 0) {
    const days = Math.max(1, Math.round(p.backtest.sinceMs / DAY_MS));
    advice.push({
      kind: "no_fires",
      message:
        `Its ${days}-day backtest fired 0 times, so it waits and spends no weekly slot unless the operator ` +
        "passes --include-silent to harness rules propose: check `when` against your evidence with " +
        "backtest_rule before proposing it, or say in the rationale why a rule that has not fired yet is wanted.",
    });
  }
  const starter = starterLevels().get(p.name);
  if (starter !== undefined) {
    const current = rules.rules.find((r) => r.rule.spec.name === p.name);
    const now =
      current === undefined
        ? "not in force now"
        : current.source.kind === "starter"
          ? "in force"
          : `already overridden by policy repo ${current.source.repo}`;
    advice.push({
      kind: "starter_override",
      rule: p.name,
      message:
        `${p.name} is the name of an embedded starter rule (level ${starter}; ${now}), and a policy rule of that ` +
        "name replaces it entirely once merged: choose another name unless replacing the starter is the " +
        "point, and then say so in the rationale.",
    });
  }
  return advice;
}

function sameExpression(p: AdvisedProposal, r: ActiveRule): string {
  const name = r.rule.spec.name;
  const where = sourceOf(r);
  if (name !== p.name)
    return (
      `The rule ${name} in force (${where}) already tests this expression (the same \`on\` and \`when\`): ` +
      `do not propose it under a new name; if ${name}'s level, target, cooldown or message should change, ` +
      `propose that under the name ${name}.`
    );
  if (r.rule.hash === p.contentHash)
    return (
      `This is the rule ${name} in force (${where}) with the same level, target and cooldown: only its ` +
      "description or message can differ, so propose it only if that rewording is the point."
    );
  return (
    `The rule ${name} in force (${where}) already tests this expression: this proposal changes only its ` +
    "level, target or cooldown, so say in the rationale why that change is wanted."
  );
}

function sameWhen(p: AdvisedProposal, r: ActiveRule): string {
  const name = r.rule.spec.name;
  return (
    `The rule ${name} in force (${sourceOf(r)}) has the same \`when\` on ${r.rule.spec.on} events, where this ` +
    `proposal has ${p.on}: check that ${p.on} is the kind meant, and if ${name} is the rule to change, ` +
    `propose the change under the name ${name}.`
  );
}

const sourceOf = (r: ActiveRule): string =>
  r.source.kind === "starter" ? "an embedded starter rule" : `from policy repo ${r.source.repo}`;

let starters: ReadonlyMap<string, string> | undefined;

/** The embedded starter rules' names and levels, as lint's `starter_override` knows them; loaded once. */
function starterLevels(): ReadonlyMap<string, string> {
  starters ??= new Map(
    loadStarterPack().flatMap((l) => (l.ok ? [[l.rule.spec.name, l.rule.spec.level] as const] : [])),
  );
  return starters;
}
