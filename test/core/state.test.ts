import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyDelta, emptyState, type Hold, type StateOp, StateView } from "../../src/core/state.js";
import { runs } from "../property-runs.js";

/** Few keys, so that ops meet the entries earlier ops made. */
const key = fc.constantFrom("a", "b", "c");
const hold = (k: string): Hold => ({
  rule: k,
  hash: `hash-${k}`,
  harness: "h",
  fireId: `f-${k}`,
  since: 0,
  cooldown: 60_000,
  event: { type: "closed" },
});
const op: fc.Arbitrary<StateOp> = fc.oneof(
  fc.record({ op: fc.constant("shadow_since"), hash: key, since: fc.nat(1000) }),
  fc.record({ op: fc.constant("shadow_completed"), hash: key }),
  fc.record({
    op: fc.constant("cooldown"),
    key,
    entry: fc.record({ until: fc.nat(1000), fireId: fc.constant("f") }),
  }),
  fc.record({ op: fc.constant("cooldown_expired"), key }),
  key.map((k) => ({ op: "hold" as const, key: k, hold: hold(k) })),
  fc.record({ op: fc.constant("hold_false_since"), key, at: fc.option(fc.nat(1000), { nil: undefined }) }),
  fc.record({ op: fc.constant("release"), key, cause: fc.constant("operator" as const) }),
  fc.record({ op: fc.constant("run_in_flight"), harness: key, run: fc.option(key, { nil: undefined }) }),
  fc.record({ op: fc.constant("cost_exceeded"), hash: key }),
);

describe("the state ops", () => {
  it("read the same through a row's view as in the state the accumulator folds", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), fc.array(op, { maxLength: 20 }), (before, row) => {
        const base = applyDelta(emptyState, before);
        const view = new StateView(base);
        for (const o of row) view.apply(o);
        const after = applyDelta(base, row);
        for (const k of ["a", "b", "c"]) {
          expect(view.shadow(k)).toEqual(after.shadows[k]);
          expect(view.cooldown(k)).toEqual(after.cooldowns[k]);
          expect(view.hold(k)).toEqual(after.holds[k]);
          expect(view.run(k)).toEqual(after.runs[k]);
          expect(view.costExceeded(k)).toBe(after.costExceeded[k] === true);
        }
        expect(new Map(view.holds())).toEqual(new Map(Object.entries(after.holds)));
        expect(view.anyCostExceeded()).toBe(Object.keys(after.costExceeded).length > 0);
      }),
      { numRuns: runs(300) },
    );
  });

  it("leave the state they are applied to as it was", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), fc.array(op, { maxLength: 20 }), (before, row) => {
        const base = applyDelta(emptyState, before);
        const copy = structuredClone(base);
        applyDelta(base, row);
        const view = new StateView(base);
        for (const o of row) view.apply(o);
        expect(base).toEqual(copy);
      }),
      { numRuns: runs(100) },
    );
  });
});
