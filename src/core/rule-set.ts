/**
 * Assembling the rule set (SPEC-0029 REQ-2): the starter pack, overridden by name by policy-repo rules;
 * one name in two policy repos disables both (`duplicate_name`); `[memory.rules] disable` disables
 * whatever the source (`operator`). Pure: the shell reads the files, this decides.
 */
import type { ActiveRule, RuleSource } from "./active-rule.js";
import { activeRule } from "./active-rule.js";
import type { RuleLoad } from "./compile-rule.js";
import { enforceEntries, entriesEnforce } from "./enforce-entry.js";
import { atLeast, type DisableReason, type Level } from "./rule-file.js";
import { RulePlan } from "./rule-plan.js";

export { type ActiveRule, activeRule, type RuleSource } from "./active-rule.js";

/** Hold and stop act only for a rule listed in `enforce` (REQ-10); annotate and notify need no listing. */
export const needsEnforce = (level: Level): boolean => atLeast(level, "hold");

/** REQ-10: the declared level, capped at notify unless the rule is listed in `enforce`. */
export const effectiveLevel = (active: ActiveRule): Level =>
  active.enforced || !needsEnforce(active.rule.spec.level) ? active.rule.spec.level : "notify";

/** REQ-9: a starter rule, or a shadow period of 0, is active at once, whatever its shadow record says. */
export const skipsShadow = (active: ActiveRule, shadowPeriod: number): boolean =>
  active.source.kind === "starter" || shadowPeriod === 0;

export interface DisabledRule {
  readonly name: string;
  readonly file: string;
  readonly source: RuleSource;
  readonly reason: DisableReason;
  readonly message: string;
}

/** A pin in `enforce` that no longer matches what is loaded under its name. */
export interface StalePin {
  readonly name: string;
  readonly pinned: string;
  readonly loaded: string;
}

export interface RuleSet {
  /** In lexical order of name: the order rules are evaluated on every row (REQ-7). */
  readonly rules: readonly ActiveRule[];
  readonly disabled: readonly DisabledRule[];
  /** `[memory.rules] shadow_period`, ms; 0 turns shadowing off. */
  readonly shadowPeriod: number;
  /** Names in `enforce` that match no loaded rule: doctor fails on them. */
  readonly unknownEnforced: readonly string[];
  /**
   * `NAME@HASH` entries whose loaded rule has another content hash (and no other entry enforces it):
   * the rule is not enforced until pinned again. Doctor lists them.
   */
  readonly stalePins: readonly StalePin[];
  /** Enforced rules listed only by pins (one matches): a change of content ends their enforcement. */
  readonly pinned: readonly string[];
  /** The per-evaluation cost limit; REQ-6's 5,000 unless a test injects a lower one. */
  readonly costLimit?: number;
  /**
   * What `evaluate` works out once for these `rules` (`rule-plan.ts`), made with the set by `ruleSetOf`.
   * A copy of the set with other fields changed shares it; one with other rules needs its own.
   */
  readonly plan: RulePlan;
}

/** A rule set with its plan. */
export function ruleSetOf(fields: Omit<RuleSet, "plan">): RuleSet {
  return { ...fields, plan: new RulePlan(fields.rules) };
}

/**
 * The set's plan: the one made with it, or, for a set whose `rules` were swapped in a copy, a fresh one
 * (correct, but made on every call: build such a set with `ruleSetOf`).
 */
export function planOf(set: RuleSet): RulePlan {
  return set.plan.rules === set.rules ? set.plan : new RulePlan(set.rules);
}

export interface RuleSetOptions {
  readonly starter: readonly RuleLoad[];
  readonly policy: readonly { readonly repo: string; readonly loads: readonly RuleLoad[] }[];
  readonly disable?: readonly string[];
  /** `[memory.rules] enforce` as written: names and `NAME@HASH` pins (`enforce-entry.ts`). */
  readonly enforce?: readonly string[];
  readonly shadowPeriod: number;
}

const nameOf = (load: RuleLoad, fallback: string): string =>
  load.ok
    ? load.rule.spec.name
    : (load.problem.file
        .split(/[\\/]/)
        .pop()
        ?.replace(/\.toml$/, "") ?? fallback);

export function assembleRuleSet(options: RuleSetOptions): RuleSet {
  const candidates = new Map<string, { load: RuleLoad; source: RuleSource }>();
  for (const load of options.starter)
    candidates.set(nameOf(load, "?"), { load, source: { kind: "starter" } });
  const disabled: DisabledRule[] = [];
  const policyNames = new Map<string, string>();
  const duplicates = new Set<string>();
  for (const { repo, loads } of options.policy) {
    for (const load of loads) {
      const name = nameOf(load, "?");
      const earlier = policyNames.get(name);
      if (earlier !== undefined && earlier !== repo) duplicates.add(name);
      policyNames.set(name, repo);
      candidates.set(name, { load, source: { kind: "policy", repo } });
    }
  }
  const disable = new Set(options.disable ?? []);
  const enforce = enforceEntries(options.enforce ?? []);
  const rules: ActiveRule[] = [];
  const stalePins: StalePin[] = [];
  const pinned: string[] = [];
  for (const [name, { load, source }] of [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const file = load.ok ? load.rule.spec.file : load.problem.file;
    if (duplicates.has(name)) {
      disabled.push({
        name,
        file,
        source,
        reason: "duplicate_name",
        message: `${name} is defined by more than one policy repo`,
      });
    } else if (disable.has(name)) {
      disabled.push({ name, file, source, reason: "operator", message: "listed in [memory.rules] disable" });
    } else if (!load.ok) {
      disabled.push({ name, file, source, reason: load.problem.reason, message: load.problem.message });
    } else {
      const entries = enforce.get(name);
      const enforced = entriesEnforce(entries, load.rule.hash);
      if (enforced && entries?.every((e) => e.hash !== undefined) === true) pinned.push(name);
      if (!enforced)
        for (const e of entries ?? [])
          if (e.hash !== undefined) stalePins.push({ name, pinned: e.hash, loaded: load.rule.hash });
      rules.push(activeRule(load.rule, source, enforced));
    }
  }
  const loaded = new Set(rules.map((r) => r.rule.spec.name));
  return ruleSetOf({
    rules,
    disabled,
    shadowPeriod: options.shadowPeriod,
    unknownEnforced: [...enforce.keys()].filter((n) => !loaded.has(n)),
    stalePins,
    pinned,
  });
}
