/**
 * The facts a remote install's forwarder sends (decision 0017) are bounded like every other input:
 * whatever a caller sends, what reaches a row is within the journal's bounds and names only plain
 * repo-relative paths; an envelope that is not one is refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_IDENT, MAX_PATH, MAX_PATHS } from "../../../../src/core/kinds.js";
import { ROW_IDENT, ROW_PATH, ROW_PATHS } from "../../../../src/shell/agents/ingest/payload-bounds.js";
import {
  boundFacts,
  envelopeBody,
  openEnvelope,
} from "../../../../src/shell/agents/ingest/supplied-facts.js";

const codePoints = (s: string) => [...s].length;

describe("supplied facts", () => {
  it("the forwarder's bounds are the journal's", () => {
    expect([ROW_IDENT, ROW_PATH, ROW_PATHS]).toEqual([MAX_IDENT, MAX_PATH, MAX_PATHS]);
  });

  it("keep a forwarder's facts as sent, and drop what is not a plain relative path", () => {
    expect(
      boundFacts({
        repo: "forge.example/org/reduit",
        branch: "feature",
        paths: ["src/a.ts", "/etc/passwd", "../up", "a/./b", "a//b", "a\\b", "x\u0007", "", 7, "src/a.ts"],
      }),
    ).toEqual({ repo: "forge.example/org/reduit", branch: "feature", paths: ["src/a.ts"] });
    expect(boundFacts({ repo: "r".repeat(ROW_IDENT + 1), branch: "b\n" })).toEqual({});
    expect(boundFacts("not an object")).toEqual({});
  });

  it("whatever is sent, what is kept is within the row's bounds", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 1100, unit: "grapheme" }),
      fc.string({ maxLength: 300, unit: "binary" }),
    );
    fc.assert(
      fc.property(
        fc.record({
          repo: fc.oneof(text, fc.integer()),
          branch: text,
          paths: fc.array(text, { maxLength: 200 }),
        }),
        (sent) => {
          const kept = boundFacts(sent);
          for (const v of [kept.repo, kept.branch])
            if (v !== undefined) {
              expect(codePoints(v)).toBeLessThanOrEqual(ROW_IDENT);
              expect(/\p{Cc}/u.test(v)).toBe(false);
            }
          const paths = kept.paths ?? [];
          expect(paths.length).toBeLessThanOrEqual(ROW_PATHS);
          expect(new Set(paths).size).toBe(paths.length);
          for (const p of paths) {
            expect(codePoints(p)).toBeLessThanOrEqual(ROW_PATH);
            expect(p.startsWith("/")).toBe(false);
            expect(p.split("/")).not.toContain("..");
          }
        },
      ),
    );
  });

  it("an envelope round-trips its payload, facts and clock; anything else is refused", () => {
    const payload = Buffer.from(JSON.stringify({ session_id: "s", hook_event_name: "Stop" }));
    const body = envelopeBody(payload, { repo: "h/o/n", paths: ["a"] }, 1_700_000_000_000);
    expect(openEnvelope(JSON.parse(body.toString("utf8")))).toEqual({
      payload: { session_id: "s", hook_event_name: "Stop" },
      facts: { repo: "h/o/n", paths: ["a"] },
      clock: 1_700_000_000_000,
    });
    expect(openEnvelope({ v: 1, payload: {}, clock: -5 })).toEqual({ payload: {}, facts: {} });
    expect(openEnvelope({ v: 2, payload: {} })).toMatch(/not a facts envelope/);
    expect(openEnvelope({ v: 1, payload: [1] })).toMatch(/payload is not a JSON object/);
  });
});
