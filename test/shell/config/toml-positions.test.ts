import { describe, expect, it } from "vitest";
import { scanPositions } from "../../../src/shell/config/toml-positions.js";

describe("key positions", () => {
  it("skips what only looks like a table or key inside strings and arrays", () => {
    const text = [
      'prompt = """',
      "[notify]",
      'bogus = 1"""',
      "list = [",
      '  "[server]", # a comment',
      "  { x = 1 },",
      "]",
      "[notify]",
      "  bogus = 2",
    ].join("\r\n");
    const p = scanPositions(text);
    expect(p.of(["notify"])).toEqual({ line: 8, column: 1 });
    expect(p.of(["notify", "bogus"])).toEqual({ line: 9, column: 3 });
    expect(p.of(["server"])).toBeUndefined();
  });

  it("finds quoted, dotted and inline keys, and the tables they imply", () => {
    const p = scanPositions('[ policy_repo . "ops" ]\nx.y = { z = 1, "a\\u0062" = 2 }\n');
    expect(p.of(["policy_repo"])).toEqual({ line: 1, column: 1 });
    expect(p.of(["policy_repo", "ops", "x", "y", "z"])).toEqual({ line: 2, column: 9 });
    expect(p.of(["policy_repo", "ops", "x", "y", "ab"])).toEqual({ line: 2, column: 16 });
  });
});
