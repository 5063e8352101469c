import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ReplayedFire } from "../../../src/core/backtest.js";
import { diffFires, fireKey } from "../../../src/shell/backtest/fire-diff.js";
import { runs } from "../../property-runs.js";

const fire: fc.Arbitrary<ReplayedFire> = fc
  .record({
    seq: fc.integer({ min: 1, max: 30 }),
    at: fc.nat(),
    kind: fc.constant("graph_event"),
    type: fc.constant("edge_added"),
    target: fc.option(fc.record({ kind: fc.constantFrom("run", "node"), key: fc.constantFrom("a", "b") }), {
      nil: undefined,
    }),
    declaredLevel: fc.constant("notify" as const),
    level: fc.constant("notify" as const),
    mode: fc.constant("active" as const),
    message: fc.string({ maxLength: 8 }),
  })
  .map(({ target, ...rest }) => (target === undefined ? rest : { ...rest, target }));

describe("backtest fire diff", () => {
  it("a rule diffed with itself adds and removes nothing", () => {
    fc.assert(
      fc.property(fc.array(fire, { maxLength: 20 }), (fires) => {
        expect(diffFires(fires, fires)).toEqual({ added: [], removed: [] });
      }),
      { numRuns: runs(200) },
    );
  });

  it("added and removed partition the symmetric difference of the two versions' fire keys", () => {
    fc.assert(
      fc.property(fc.array(fire, { maxLength: 20 }), fc.array(fire, { maxLength: 20 }), (loaded, next) => {
        const { added, removed } = diffFires(loaded, next);
        const l = new Set(loaded.map(fireKey));
        const n = new Set(next.map(fireKey));
        const addedKeys = new Set(added.map(fireKey));
        const removedKeys = new Set(removed.map(fireKey));
        expect(addedKeys).toEqual(new Set([...n].filter((k) => !l.has(k))));
        expect(removedKeys).toEqual(new Set([...l].filter((k) => !n.has(k))));
        expect([...addedKeys].some((k) => removedKeys.has(k))).toBe(false);
      }),
      { numRuns: runs(200) },
    );
  });
});
