import { describe, expect, it } from "vitest";
import { compileRule } from "../../../src/core/compile-rule.js";
import { renderMessage } from "../../../src/core/message.js";
import { PLACEHOLDERS, parseRuleFile } from "../../../src/core/rule-file.js";
import { PROPOSE_RULE_INPUT } from "../../../src/shell/gateway/propose-rule-tool.js";

// backtest_rule declares its rule fields from the same shape, so these are every tool description that names placeholders.
const descriptions = Object.entries(PROPOSE_RULE_INPUT).map(([key, schema]): [string, string] => [
  key,
  schema.description ?? "",
]);

describe("tool descriptions", () => {
  it("finding 1: every placeholder named in a tool description renders", () => {
    const message = PROPOSE_RULE_INPUT.message.description ?? "";
    const named = [...message.matchAll(/\{\{\s*([a-z]+)\s*\}\}/g)].map((m) => m[1] ?? "");
    expect(named.length).toBeGreaterThan(0);
    for (const [key, text] of descriptions) {
      // a single-brace {name} is the wrong syntax: it would be stored and render literally
      expect(text.replace(/\{\{[^}]*\}\}/g, ""), key).not.toMatch(/\{[a-z]+\}/);
    }
    const event = {
      harness: "h1",
      run: "r9",
      repo: "acme/app",
      branch: "main",
      path: "src/a.ts",
      type: "closed",
    };
    for (const name of new Set(named)) {
      expect(PLACEHOLDERS as readonly string[]).toContain(name);
      const parsed = parseRuleFile(
        "rules/probe.toml",
        `name = "probe"\ndescription = "d"\non = "run_event"\nwhen = "true"\nlevel = "notify"\ntarget = "harness"\nmessage = "x {{${name}}} y"\n`,
      );
      expect(parsed.ok, name).toBe(true);
      if (!parsed.ok) continue;
      const rendered = renderMessage(parsed.spec.message, {
        rule: "probe",
        level: "notify",
        at: Date.UTC(2026, 0, 2, 3, 4, 5),
        event,
      });
      expect(rendered, name).not.toMatch(/[{}]/);
      expect(rendered, name).not.toBe("x  y");
    }
  });

  it("every window a tool description teaches is one a rule accepts", () => {
    const when = PROPOSE_RULE_INPUT.when.description ?? "";
    const windows = [...when.matchAll(/duration\("([^"]*)"\)/g)].map((m) => m[1] ?? "");
    expect(windows).toContain("168h");
    // A window written in days is refused (CEL durations have no d unit): the description must not teach one.
    expect(when).not.toMatch(/\b\d+d\b/);
    for (const w of new Set(windows)) {
      const parsed = parseRuleFile(
        "rules/probe.toml",
        `name = "probe"\ndescription = "d"\non = "run_event"\nwhen = 'count({"type": "closed"}, duration("${w}")) > 0'\nlevel = "notify"\ntarget = "harness"\nmessage = "m"\n`,
      );
      expect(parsed.ok, w).toBe(true);
      if (parsed.ok) expect(compileRule(parsed.spec).ok, w).toBe(true);
    }
  });
});
