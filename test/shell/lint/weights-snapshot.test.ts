import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { lintWeightsSnapshot, weightsHash } from "../../../src/shell/lint/weights-snapshot.js";
import { SNAPSHOT_BODY, snapshot } from "./weights-fixture.js";

const messages = (text: string) =>
  lintWeightsSnapshot(text).map((f) => `${f.line}:${f.reason}: ${f.message}`);

describe("the weights snapshot", () => {
  it("accepts a snapshot whose hash is its own", () => {
    expect(lintWeightsSnapshot(snapshot())).toEqual([]);
  });

  it("hashes the content, not its layout: reordering and comments keep the hash, any value changes it", () => {
    const doc = parseToml(SNAPSHOT_BODY);
    const reordered = SNAPSHOT_BODY.replace(
      "scores = { coding = 0.82, review = 0.77 }",
      "# reviewed\nscores = { review = 0.77, coding = 0.820 }",
    );
    expect(weightsHash(parseToml(reordered))).toBe(weightsHash(doc));
    for (const [from, to] of [
      ['family = "gpt"', 'family = "gpt5"'],
      ['aliases = ["sonnet-9"]', 'aliases = ["sonnet-9", "s9"]'],
      ["fetched_at = 2026-10-01T06:00:00Z", "fetched_at = 2026-10-01T06:00:01Z"],
      ['match = "claude-*"', 'match = "claude*"'],
      ['url = "https://arena.example/leaderboard.json"', 'url = "https://arena.example/other.json"'],
    ] as const) {
      expect(weightsHash(parseToml(SNAPSHOT_BODY.replace(from, to))), from).not.toBe(weightsHash(doc));
    }
    // The same instant written with another offset is the same content.
    const offset = SNAPSHOT_BODY.replace(
      "fetched_at = 2026-10-01T06:00:00Z",
      "fetched_at = 2026-10-01T08:00:00+02:00",
    );
    expect(weightsHash(parseToml(offset))).toBe(weightsHash(doc));
  });

  it("checks each part of the format, as errors with the line of the offending table", () => {
    const broken = snapshot(
      SNAPSHOT_BODY.replace("schema = 1", "schema = 2")
        .replace('url = "https://arena.example/leaderboard.json"', 'url = "ftp://x"')
        .replace('family = "gpt"', 'family = ""\ntier = "x"')
        .replace("scores = { coding = 0.8 }", 'scores = { coding = "high" }')
        .replace('match = "claude-*"\n', ""),
    );
    expect(
      lintWeightsSnapshot(broken).every((f) => f.severity === "error" && f.reason === "weights_format"),
    ).toBe(true);
    expect(messages(broken)).toEqual([
      "2:weights_format: schema must be 1",
      "5:weights_format: [[source]] #1 needs a url (http or https)",
      '18:weights_format: unknown key tier in models."gpt-7" (allowed: family, aliases, scores)',
      '17:weights_format: models."gpt-7" needs a family',
      '20:weights_format: models."gpt-7": score coding must be a finite number',
      "22:weights_format: [[family_rule]] #1 needs a match",
    ]);
  });

  it("refuses a missing or malformed hash, naming the hash the snapshot has", () => {
    const want = weightsHash(parseToml(SNAPSHOT_BODY));
    expect(messages(SNAPSHOT_BODY)).toEqual([
      `1:weights_format: content_sha256 must be 64 lowercase hex digits (the snapshot hashes to ${want})`,
    ]);
  });

  it("refuses an alias two models claim, and TOML it cannot parse", () => {
    const text = snapshot(SNAPSHOT_BODY.replace("aliases = []", 'aliases = ["sonnet-9"]'));
    expect(messages(text)).toEqual([
      '18:weights_format: models."gpt-7": alias sonnet-9 also names claude-sonnet-9',
    ]);
    expect(lintWeightsSnapshot("schema = ")).toMatchObject([{ reason: "weights_format", line: 1 }]);
  });
});
