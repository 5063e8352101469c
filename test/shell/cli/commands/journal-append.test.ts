/**
 * `harness journal append` against a real daemon: text that is not well-formed Unicode (an invalid
 * UTF-8 byte, an escaped lone surrogate) or holds a control character is refused with its line number,
 * never stored rewritten as U+FFFD, and the other lines are still admitted; a byte order mark is
 * accepted at the start of the first line only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestFleet } from "../../daemon-harness.js";

const opened = (run: string) =>
  `{"kind":"run_event","type":"opened","at":"2026-01-05T10:00:00Z","harness":"impl","run":"${run}"}`;

/** `line` with its `X` replaced by a byte no UTF-8 text holds. */
function notUtf8(line: string): Buffer {
  const b = Buffer.from(line);
  b[b.indexOf("X")] = 0xff;
  return b;
}

describe("harness journal append", () => {
  const f = new TestFleet();
  let ledger: string;
  const append = (stdin: string | Uint8Array) =>
    f.cli(["journal", "append", "--token-file", ledger, "--json"], stdin);
  const runs = () =>
    f.query<{ run: string }>(
      "SELECT json_extract(event, '$.run') AS run FROM rule_journal WHERE kind = 'run_event' ORDER BY seq",
    );
  const outcomes = (stdout: string) =>
    stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; outcome: string; detail?: string })
      // Lines the command refuses itself are reported before the batch that holds the others is answered.
      .sort((a, b) => a.line - b.line)
      .map((o) => `${o.line} ${o.outcome}${o.outcome === "admitted" ? "" : `: ${o.detail}`}`);

  beforeAll(async () => {
    await f.start();
    ledger = f.tokens.get("ledger") as string;
  });
  afterAll(() => f.dispose());

  it("refuses a line that is not UTF-8, holds a lone surrogate or a control character, with its line number, and admits the rest", async () => {
    const stdin = Buffer.concat([
      Buffer.from(`${opened("impl#1")}\n`),
      notUtf8(opened("impl#2X")),
      Buffer.from(`\n${opened("impl#3\\ud800")}\n${opened("impl#4\\u0000")}\n${opened("impl#5")}\n`),
    ]);
    const r = await append(stdin);
    expect(r.code).toBe(1);
    expect(outcomes(r.stdout)).toEqual([
      "1 admitted",
      "2 rejected: not UTF-8 text",
      "3 rejected: run is not well-formed Unicode (it holds an unpaired surrogate)",
      "4 rejected: run holds a control character (U+0000)",
      "5 admitted",
    ]);
    expect(runs()).toEqual([{ run: "impl#1" }, { run: "impl#5" }]);
  });

  it("accepts a byte order mark at the start of the first line, and refuses one anywhere else saying so", async () => {
    const r = await append(`\ufeff${opened("impl#6")}\n\ufeff${opened("impl#7")}\n`);
    expect(outcomes(r.stdout)).toEqual([
      "1 admitted",
      "2 rejected: a byte order mark (U+FEFF) may only begin the first line",
    ]);
    expect(runs().at(-1)).toEqual({ run: "impl#6" });
  });
});
