import { describe, expect, it } from "vitest";
import { clearCommand, heldSentence } from "../../src/core/held-sentence.js";

describe("the held sentence", () => {
  it("names the harness, the rule, the fire and the command that releases it", () => {
    expect(heldSentence("impl", { rule: "tool-failures-hold", fireId: "f-12-0" })).toBe(
      "impl is held by rule tool-failures-hold (fire f-12-0); run `harness rules clear impl` to release it",
    );
  });

  it("gives the clear command for every hold on the harness, or for one rule's", () => {
    expect(clearCommand("impl")).toBe("harness rules clear impl");
    expect(clearCommand("impl", "budget")).toBe("harness rules clear impl --rule budget");
  });
});
