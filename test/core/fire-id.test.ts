import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fireId, MAX_FIRE_ID_LENGTH, parseFireId } from "../../src/core/fire-id.js";
import { runs } from "../property-runs.js";

const part = fc.oneof(fc.nat(1_000), fc.maxSafeNat());

// Texts near the format: a fire id's pieces, broken pieces and stray characters, in any order.
const piece = fc.constantFrom("f", "-", "0", "1", "9", "00", "01", "+", " ", "F", "e", ".", "x", "٣");
const nearId = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((ps) => ps.join("")),
  fc
    .tuple(fc.stringMatching(/^[0-9]{1,20}$/), fc.stringMatching(/^[0-9]{1,20}$/))
    .map(([a, b]) => `f-${a}-${b}`),
  fc.string({ maxLength: 40 }),
);

describe("fire ids", () => {
  it("parse back to the row and place they were built from", () => {
    fc.assert(
      fc.property(part, part, (seq, index) => {
        expect(parseFireId(fireId(seq, index))).toEqual({ seq, index });
        expect(fireId(seq, index).length).toBeLessThanOrEqual(MAX_FIRE_ID_LENGTH);
      }),
      { numRuns: runs(500) },
    );
  });

  it("refuse any text that building cannot make", () => {
    fc.assert(
      fc.property(nearId, (text) => {
        const parts = parseFireId(text);
        if (parts !== undefined) expect(fireId(parts.seq, parts.index)).toBe(text);
      }),
      { numRuns: runs(2_000) },
    );
  });

  it("refuses leading zeros, signs, unsafe numbers and other shapes", () => {
    for (const text of [
      "",
      "f-",
      "f-1",
      "f-1-",
      "f--1-0",
      "f-01-0",
      "f-1-00",
      "f-+1-0",
      "f-1-0 ",
      "F-1-0",
      "f-1.5-0",
      "f-1e3-0",
      "f-9007199254740992-0",
      "f-1-9007199254740992",
      `f-1-${"0".repeat(100_000)}`,
    ])
      expect(parseFireId(text), text).toBeUndefined();
    expect(parseFireId("f-9007199254740991-0")).toEqual({ seq: Number.MAX_SAFE_INTEGER, index: 0 });
    expect(parseFireId("f-0-0")).toEqual({ seq: 0, index: 0 });
  });
});
