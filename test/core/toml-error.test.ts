import { describe, expect, it } from "vitest";
import { parseRuleFile } from "../../src/core/rule-file.js";

const problem = (text: string) => {
  const r = parseRuleFile("rules/x.toml", text);
  if (r.ok) throw new Error("expected a problem");
  return r.problem;
};

describe("a TOML syntax error in a rule file", () => {
  it("reports a quoted string left open as unterminated, at its line", () => {
    for (const eol of ["\n", "\r\n"])
      expect(problem(`name = "x${eol}description = "y"${eol}`)).toMatchObject({
        reason: "schema",
        line: 1,
        message: expect.stringMatching(/^invalid TOML: unterminated string: /),
      });
  });

  it("still reports a control character inside a string as one", () => {
    expect(problem('name = "x\u0001y"\n').message).toMatch(
      /^invalid TOML: .*control characters are not allowed/,
    );
  });
});
