import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { branchProblem, remoteProblem } from "../../../src/shell/config/git-refs.js";
import { runs, runsTimeout } from "../../property-runs.js";

/** What git itself says of `refs/heads/<name>`. */
function gitAcceptsBranch(name: string): boolean {
  try {
    execFileSync("git", ["check-ref-format", `refs/heads/${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("the git wrapper's checks, against git's own rules", () => {
  it(
    "accepts a branch name exactly when git check-ref-format does, but for a leading - and a lone @",
    () => {
      const piece = fc.constantFrom(
        "a",
        "b",
        ".",
        "/",
        "-",
        "@",
        "{",
        ":",
        "~",
        " ",
        ".lock",
        "x",
        "[",
        "\\",
      );
      fc.assert(
        fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (parts) => {
          const name = parts.join("");
          const ours = branchProblem(name) === undefined;
          expect(ours, JSON.stringify(name)).toBe(
            gitAcceptsBranch(name) && !name.startsWith("-") && name !== "@",
          );
        }),
        { numRuns: runs(150) },
      );
    },
    runsTimeout(20_000),
  );

  it("refuses every <transport>::<address> and every leading -, whatever follows", () => {
    const transport = fc.stringMatching(/^[A-Za-z][A-Za-z0-9+.-]{0,8}$/);
    fc.assert(
      fc.property(transport, fc.string(), (t, rest) => {
        expect(remoteProblem(`${t}::${rest}`)).toBeDefined();
        expect(remoteProblem(`-${t}${rest}`)).toBeDefined();
      }),
      { numRuns: runs(300) },
    );
  });
});
