/**
 * The tables the docs hold of closed sets in the code, compared row for row, so a method or a reason
 * added to the code cannot go missing from its doc (docs/security.md's method table lacked
 * AgentStatusService/LastRows): every method's tier in `METHOD_TIERS`, and every reason in
 * `REFUSAL_REASONS` that `harness_rule_journal_rejected_total` may carry.
 */
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { REFUSAL_REASONS } from "../../../src/core/admission.js";
import { METHOD_TIERS } from "../../../src/shell/rpc/tiers.js";

const doc = (name: string): string =>
  fs.readFileSync(new URL(`../../../docs/${name}`, import.meta.url), "utf8");

/** The body rows of the table whose header row is `header` (exactly), each as its trimmed cells. */
function tableRows(text: string, header: string): string[][] {
  const lines = text.split("\n");
  const start = lines.indexOf(header);
  expect(start, `a table headed ${header}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** A cell's one code span, unquoted. */
const code = (cell: string | undefined): string => /^`([^`]+)`$/.exec(cell ?? "")?.[1] ?? `not code: ${cell}`;

describe("docs/security.md", () => {
  it("lists every method of METHOD_TIERS with its tier, and no other", () => {
    const rows = tableRows(
      doc("security.md"),
      "| Method                                        | Tier       |",
    ).map(([method, tier]) => [code(method), code(tier)] as const);
    expect(new Map(rows)).toEqual(new Map(METHOD_TIERS));
    expect(rows.length).toBe(METHOD_TIERS.size);
  });
});

describe("docs/events.md", () => {
  it("explains every reason of REFUSAL_REASONS, and no other", () => {
    const rows = tableRows(
      doc("events.md"),
      "| `reason`             | Refused                                                                                                |",
    ).map(([reason]) => code(reason));
    expect([...rows].sort()).toEqual([...REFUSAL_REASONS].sort());
  });
});
