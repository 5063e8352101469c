/** Shell words as the CLI writes them (`shellWord`) and reads its own back (`shellWords`). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shellWord, shellWords } from "../../../src/shell/support/shell-word.js";
import { runs } from "../../property-runs.js";

describe("shell words", () => {
  it("any words written with shellWord and joined by spaces read back as themselves", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 40 }), { minLength: 1, maxLength: 8 }),
        (words) => {
          expect(shellWords(words.map(shellWord).join(" "))).toEqual(words);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it("text shellWord never writes is not read as words", () => {
    for (const text of ["a  b", " a", "a ", 'a "b"', "'open", "a;b", "$(x)", "a\tb"])
      expect(shellWords(text), text).toBeUndefined();
  });
});
