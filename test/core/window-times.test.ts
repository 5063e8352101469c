import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WindowTimes } from "../../src/core/window-times.js";
import { runs } from "../property-runs.js";

type Step =
  | { readonly op: "push"; readonly gap: number }
  | { readonly op: "ask"; readonly back: number; readonly length: number }
  | { readonly op: "drop"; readonly age: number };

const LENGTHS = [1, 3, 40];

const step: fc.Arbitrary<Step> = fc.oneof(
  // Runs of pushes at one time, so many times can leave a window between two asks of it.
  {
    weight: 8,
    arbitrary: fc.record({ op: fc.constant("push" as const), gap: fc.constantFrom(0, 0, 0, 1, 2) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("ask" as const),
      // Mostly the fold's pattern (now = the last time), sometimes a later or an earlier now.
      back: fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 30 })),
      length: fc.constantFrom(...LENGTHS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("drop" as const), age: fc.integer({ min: 0, max: 50 }) }),
  },
);

describe("WindowTimes", () => {
  it("counts every window as a scan of its times does, whatever order the windows are asked in", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 100, maxLength: 400 }), (steps) => {
        const times = new WindowTimes();
        let kept: number[] = [];
        let clock = 0;
        for (const s of steps) {
          if (s.op === "push") {
            clock += s.gap;
            times.push(clock);
            kept.push(clock);
          } else if (s.op === "drop") {
            const before = clock - s.age;
            expect(times.dropThrough(before)).toBe(kept.filter((t) => t > before).length);
            kept = kept.filter((t) => t > before);
          } else {
            // A window ending before the newest time is asked only of the times up to its end, as a
            // reader bound to an earlier row would be: count those that a scan would.
            const now = clock - s.back;
            const expected = kept.filter((t) => t > now - s.length && t <= now).length;
            const later = kept.filter((t) => t > now).length;
            expect(times.countWithin(now, s.length) - later).toBe(expected);
          }
        }
        expect(times.size).toBe(kept.length);
      }),
      { numRuns: runs(300) },
    );
  });
});
