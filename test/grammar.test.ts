import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generatedArtifacts, ruleNames } from "../grammar/artifacts.js";

describe("the checked-in grammar artifacts", () => {
  it("match what the parser generates (run `npm run grammar` after changing the grammar)", () => {
    for (const [name, text] of Object.entries(generatedArtifacts())) {
      expect(readFileSync(new URL(`../grammar/${name}`, import.meta.url), "utf8"), name).toBe(text);
    }
  });

  it("name every parser rule in the EBNF", () => {
    const ebnf = readFileSync(new URL("../grammar/cel.ebnf", import.meta.url), "utf8");
    const rules = ruleNames();
    expect(rules.length).toBeGreaterThan(10);
    for (const rule of rules) expect(ebnf, rule).toMatch(new RegExp(`^${rule}\\s+::=`, "m"));
  });
});
