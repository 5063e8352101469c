import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCelParse } from "../../../src/shell/cli/commands/cel-parse.js";

/** Runs `harness cel parse` as the CLI does, collecting what it prints on each stream. */
function celParse(expr: string, json: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  const exitCode = runCelParse(expr, { json }, { env: {}, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { exitCode, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("harness cel parse", () => {
  it("prints the canonical form and exits 0", () => {
    expect(celParse('event.type=="tool"  &&event.is_error', false)).toEqual({
      exitCode: 0,
      stdout: 'event.type == "tool" && event.is_error',
      stderr: "",
    });
  });

  it("prints errors with a caret and exits 1", () => {
    const out = celParse("event.outcome = 1", false);
    expect(out.exitCode).toBe(1);
    expect(out.stderr).toBe(
      "ERROR: <input>:1:15: Syntax error: unexpected character '='\n | event.outcome = 1\n | ..............^",
    );
  });

  it("speaks JSON with --json", () => {
    expect(JSON.parse(celParse("1 +", true).stdout)).toMatchObject({
      ok: false,
      errors: [{ code: "syntax", line: 1, column: 4 }],
    });
    expect(JSON.parse(celParse("[1,]", true).stdout)).toEqual({ ok: true, canonical: "[1]" });
  });

  const bin = new URL("../../../dist/shell/cli/main.js", import.meta.url);
  it("runs as the built `harness` binary", () => {
    expect(existsSync(bin), "npm test builds dist/ before the tests run").toBe(true);
    expect(execFileSync("node", [bin.pathname, "cel", "parse", "a&&b"], { encoding: "utf8" })).toBe(
      "a && b\n",
    );
    expect(execFileSync("node", [bin.pathname, "--version"], { encoding: "utf8" })).toMatch(
      /^harness\/\d+\.\d+\.\d+/,
    );
    const unknown = spawnSync("node", [bin.pathname, "frobnicate"], { encoding: "utf8" });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});
