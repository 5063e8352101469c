import { describe, expect, it } from "vitest";
import { LEVELS } from "../../src/core/rule-file.js";
import { effectiveLevel } from "../../src/core/rule-set.js";
import { enforcement, levelDerivation } from "../../src/core/rule-state.js";

const rule = (level: (typeof LEVELS)[number], enforced: boolean) =>
  ({ rule: { spec: { level } }, enforced }) as unknown as Parameters<typeof effectiveLevel>[0];

describe("REQ-10: what enforce does to a rule", () => {
  it("rules show and a fire's level derivation tell the same story for every level, listed or not", () => {
    for (const level of LEVELS)
      for (const listed of [false, true]) {
        const effective = effectiveLevel(rule(level, listed));
        const shown = enforcement(level, listed);
        const derived = levelDerivation(level, effective, false);
        // A capped rule is the only one whose fires act below their declared level.
        expect(shown === "capped", `${level} listed=${listed}`).toBe(effective !== level);
        if (shown === "capped") expect(derived).toMatch(/not in \[memory\.rules\] enforce$/);
        else if (level === "hold" || level === "stop")
          expect(derived).toMatch(/: listed in \[memory\.rules\] enforce$/);
        else expect(derived).toMatch(/annotate and notify need no enforce$/);
      }
  });
});
