/**
 * RuleService's rule methods: ListRules and GetRule describe the rule set in force, each rule with its
 * state and its fire counts from the store's fire log, at one moment of the daemon's clock.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoadedRule } from "../../core/compile-rule.js";
import { DAY } from "../../core/durations.js";
import { primitiveCallsIn } from "../../core/primitive-calls.js";
import {
  type ActiveRule,
  type DisabledRule,
  effectiveLevel,
  type RuleSet,
  type RuleSource,
} from "../../core/rule-set.js";
import { type RuleState, ruleState } from "../../core/rule-state.js";
import type { CoreState } from "../../core/state.js";
import { UnknownRuleError } from "../errors.js";
import type { RuleReadsPort } from "../store/store-door.js";
import type { RuleInfoSchema } from "./gen/harness/v1/rules_pb.js";
import { holdInfo, sortedHolds } from "./messages.js";
import { checkLength } from "./requests.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { serve } from "./status.js";

type RuleInfoInit = MessageInitShape<typeof RuleInfoSchema>;

export function ruleMethods(
  deps: Pick<RuleServiceDeps, "evaluator" | "reads" | "clock">,
): Pick<RuleServiceImpl, "listRules" | "getRule"> {
  const { evaluator, reads } = deps;
  return {
    listRules: () =>
      serve("ListRules", async () => {
        const view = await RuleView.at(evaluator.rules, evaluator.state, reads, deps.clock());
        return { rules: await view.all() };
      }),

    getRule: (req) =>
      serve(`GetRule ${req.name}`, async () => {
        checkLength(req.name, "rule");
        const set = evaluator.rules;
        const state = evaluator.state;
        const view = await RuleView.at(set, state, reads, deps.clock());
        const active = set.rules.find((r) => r.rule.spec.name === req.name);
        if (active !== undefined) {
          const { spec } = active.rule;
          return {
            rule: await view.loaded(active),
            when: active.rule.normalizedWhen,
            description: spec.description,
            message: spec.message,
            holds: sortedHolds(Object.values(state.holds).filter((h) => h.rule === req.name)).map(holdInfo),
            primitiveCalls: primitiveCallCount(active.rule),
          };
        }
        const disabled = set.disabled.find((d) => d.name === req.name);
        if (disabled === undefined) throw new UnknownRuleError(req.name);
        return { rule: view.disabled(disabled) };
      }),
  };
}

const sourceName = (s: RuleSource): string => (s.kind === "starter" ? "starter" : `policy:${s.repo}`);

/** The rule set in force as `ListRules` describes it, at one moment of the daemon's clock. */
class RuleView {
  private constructor(
    private readonly set: RuleSet,
    private readonly state: CoreState,
    private readonly reads: RuleReadsPort,
    private readonly since24h: number,
    private readonly since7d: number,
  ) {}

  static async at(set: RuleSet, state: CoreState, reads: RuleReadsPort, now: number): Promise<RuleView> {
    // A fire's seq is at least its row's: the first seq admitted after the bound, or none at all.
    const [since24h, since7d] = await Promise.all([
      reads.journal.firstAdmittedAfter(now - DAY),
      reads.journal.firstAdmittedAfter(now - 7 * DAY),
    ]);
    return new RuleView(
      set,
      state,
      reads,
      since24h ?? Number.MAX_SAFE_INTEGER,
      since7d ?? Number.MAX_SAFE_INTEGER,
    );
  }

  /** Loaded and disabled rules together, in name order. */
  async all(): Promise<RuleInfoInit[]> {
    const out: RuleInfoInit[] = [];
    for (const r of this.set.rules) out.push(await this.loaded(r));
    out.push(...this.set.disabled.map((d) => this.disabled(d)));
    return out.sort((a, b) => ((a.name ?? "") < (b.name ?? "") ? -1 : 1));
  }

  async loaded(active: ActiveRule): Promise<RuleInfoInit> {
    const { rule, source, enforced } = active;
    const { spec, hash } = rule;
    const [last, fires24h, fires7d, suppressed] = await Promise.all([
      this.reads.lastFire(hash),
      this.reads.firesOf(hash, this.since24h),
      this.reads.firesOf(hash, this.since7d),
      this.reads.suppressed(hash),
    ]);
    const base: RuleInfoInit = {
      name: spec.name,
      source: sourceName(source),
      on: spec.on,
      declaredLevel: spec.level,
      effectiveLevel: effectiveLevel(active),
      enforced,
      hash,
      cooldownMs: BigInt(spec.cooldown),
      target: spec.target,
      estimatedCost: rule.estimatedCost.max,
      fires24h,
      fires7d,
      suppressed: BigInt(suppressed),
      lastFireId: last?.fire_id ?? "",
      lastFireAtMs: BigInt(last?.at ?? 0),
      file: spec.file,
      stalePins: this.set.stalePins.filter((p) => p.name === spec.name).map((p) => p.pinned),
    };
    return { ...base, ...ruleStateInfo(ruleState(active, this.set, this.state)) };
  }

  disabled(d: DisabledRule): RuleInfoInit {
    return {
      name: d.name,
      source: sourceName(d.source),
      state: "disabled",
      disabledReason: d.reason,
      disabledMessage: d.message,
      file: d.file,
    };
  }
}

/** Calls of count, distinct and exists in a rule's `when`. */
const primitiveCallCount = (rule: LoadedRule): number =>
  [...primitiveCallsIn(rule.program.checked.expr)].length;

/** A rule's state as RuleInfo carries it: 0 for a time not set. */
function ruleStateInfo(
  s: RuleState,
): Pick<RuleInfoInit, "state" | "disabledReason" | "disabledMessage" | "shadowSinceMs" | "shadowUntilMs"> {
  if (s.state === "disabled")
    return { state: s.state, disabledReason: s.disabledReason, disabledMessage: s.disabledMessage };
  if (s.state === "active") return { state: s.state, shadowSinceMs: BigInt(s.shadowSince ?? 0) };
  return {
    state: s.state,
    shadowSinceMs: BigInt(s.shadowSince ?? 0),
    shadowUntilMs: BigInt(s.shadowUntil ?? 0),
  };
}
