/**
 * RuleService's hold methods: CheckAdmission and ListHolds read the holds in force from the core's state
 * as last committed (ListHolds the released ones from the store too); ClearHold calls back into the
 * daemon, which releases them between two journal rows.
 */
import { heldSentence } from "../../core/held-sentence.js";
import { HoldNotFoundError, InvalidArgumentError } from "../errors.js";
import { type HoldRecordInit, holdInfo, holdRecord, holdsOn, sortedHolds } from "./messages.js";
import { checkLength, limitOf } from "./requests.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { serve } from "./status.js";
import { CALLER, operatorOf } from "./tiers.js";

export function holdMethods(
  deps: Pick<RuleServiceDeps, "evaluator" | "reads" | "clear">,
): Pick<RuleServiceImpl, "checkAdmission" | "clearHold" | "listHolds"> {
  const state = () => deps.evaluator.state;
  return {
    checkAdmission: (req) =>
      serve(`CheckAdmission ${req.harness}`, () => {
        checkLength(req.harness, "harness");
        // A supervisor whose harness variable is unset must not be let through.
        if (req.harness === "") throw new InvalidArgumentError("", "harness is required");
        const holds = holdsOn(state(), req.harness);
        const first = holds[0];
        return {
          admitted: first === undefined,
          holds,
          message:
            first === undefined
              ? ""
              : heldSentence(req.harness, { rule: first.rule ?? "", fireId: first.fireId ?? "" }),
        };
      }),

    clearHold: (req, ctx) =>
      serve(`ClearHold ${req.harness}`, () => {
        checkLength(req.harness, "harness");
        checkLength(req.rule, "rule");
        const rule = req.rule === "" ? undefined : req.rule;
        const released = holdsOn(state(), req.harness).filter((h) => rule === undefined || h.rule === rule);
        if (released.length === 0) throw new HoldNotFoundError(req.harness, rule);
        deps.clear(req.harness, rule, operatorOf(ctx.values.get(CALLER)));
        return { released };
      }),

    listHolds: (req) =>
      serve("ListHolds", async () => {
        const limit = limitOf(req.limit, "hold");
        checkLength(req.harness, "harness");
        const harness = req.harness === "" ? undefined : req.harness;
        const active = sortedHolds(
          Object.values(state().holds).filter((h) => harness === undefined || h.harness === harness),
        ).map(
          (h): HoldRecordInit => ({
            hold: holdInfo(h),
            cooldownMs: BigInt(h.cooldown),
            falseSinceMs: BigInt(h.falseSince ?? 0),
          }),
        );
        if (!req.includeReleased) return { holds: active };
        const released = await deps.reads.releasedHolds(harness, limit + 1);
        return {
          holds: [...active, ...released.slice(0, limit).map(holdRecord)],
          truncated: released.length > limit,
        };
      }),
  };
}
