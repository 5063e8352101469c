/**
 * The hook endpoint's challenge (issue 26, port squat): only the daemon that drew a secret answers a
 * nonce as it does; anything that is not a nonce is refused unread.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HookChallenge } from "../../../../src/shell/agents/ingest/hook-challenge.js";

const nonce = () => randomBytes(32).toString("hex");

describe("HookChallenge", () => {
  it("answers a nonce the same every time, and another daemon's secret answers otherwise", () => {
    const a = new HookChallenge();
    const n = nonce();
    expect(a.answer(n)).toMatch(/^[0-9a-f]{64}$/);
    expect(a.answer(n)).toBe(a.answer(n));
    expect(new HookChallenge().answer(n)).not.toBe(a.answer(n));
    expect(a.answer(nonce())).not.toBe(a.answer(n));
  });

  it("refuses anything but 64 lowercase hex characters", () => {
    const c = new HookChallenge();
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        fc.pre(!/^[0-9a-f]{64}$/.test(s));
        expect(c.answer(s)).toBeUndefined();
      }),
    );
    expect(c.answer("A".repeat(64))).toBeUndefined();
    expect(c.answer(`${nonce()}0`)).toBeUndefined();
  });
});
