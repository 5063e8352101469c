/**
 * `harness journal append` against a real daemon: text that is not well-formed Unicode (an invalid
 * UTF-8 byte, an escaped lone surrogate) or holds a control character is refused with its line number,
 * never stored rewritten as U+FFFD, and the other lines are still admitted; a byte order mark is
 * accepted at the start of the first line only. Batches are split under the request limit, so no valid
 * line is lost beside a large one, and a line too large to send is refused alone with its number.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalRows } from "../../../support/store-reads.js";
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
  const runs = () => journalRows(f, { kind: "run_event" }).map((r) => ({ run: r.event.run }));
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

  /** A valid event of about 64 KB: 64 paths of 1,000 characters, within every bound. */
  const large = (run: string) =>
    JSON.stringify({
      kind: "run_event",
      type: "opened",
      harness: "impl",
      run,
      paths: Array.from({ length: 64 }, (_, i) => `${i}/${"p".repeat(990)}`),
    });

  it("1,000 small lines, then 100 lines of about 64 KB, then 10 small lines: every line is stored", async () => {
    const lines = [
      ...Array.from({ length: 1000 }, (_, i) => opened(`small#${i}`)),
      ...Array.from({ length: 100 }, (_, i) => large(`large#${i}`)),
      ...Array.from({ length: 10 }, (_, i) => opened(`tail#${i}`)),
    ];
    const before = runs().length;
    const r = await append(`${lines.join("\n")}\n`);
    expect(outcomes(r.stdout)).toEqual(lines.map((_, i) => `${i + 1} admitted`));
    expect(r.code).toBe(0);
    expect(
      runs()
        .slice(before)
        .map((x) => x.run),
    ).toEqual(lines.map((l) => (JSON.parse(l) as { run: string }).run));
  });

  it("one 10 MB line between two valid lines: both valid lines stored, the big one refused with its line number", async () => {
    const big = opened(`impl#${"x".repeat(10 * 1024 * 1024)}`);
    const r = await append(`${opened("impl#before")}\n${big}\n${opened("impl#after")}\n`);
    expect(r.code).toBe(1);
    expect(outcomes(r.stdout)).toEqual([
      "1 admitted",
      "2 rejected: the line is longer than 4 MiB",
      "3 admitted",
    ]);
    expect(runs().slice(-2)).toEqual([{ run: "impl#before" }, { run: "impl#after" }]);
  });

  it("refuses alone, with its line number, a line whose request alone would pass the request limit", async () => {
    // About 1.2 MB as a line, over 4 MiB as a request: a number costs 2 bytes here, 11 in the message.
    const paths = Array.from({ length: 600_000 }, () => 0);
    const heavy = JSON.stringify({ kind: "run_event", type: "tool", harness: "impl", run: "impl#h", paths });
    expect(heavy.length).toBeLessThan(4 * 1024 * 1024);
    const r = await append(`${opened("impl#h1")}\n${heavy}\n${opened("impl#h2")}\n`);
    expect(outcomes(r.stdout)).toEqual([
      "1 admitted",
      "2 rejected: the event is larger than the 4 MiB request limit",
      "3 admitted",
    ]);
    expect(runs().slice(-2)).toEqual([{ run: "impl#h1" }, { run: "impl#h2" }]);
  });

  it("a SIGKILL of the daemon during an append, then the client's retry, admits every line exactly once", async () => {
    const g = new TestFleet();
    try {
      // Killed after its second commit, before answering: that batch's fate is unknown to the client.
      await g.start({ HARNESS_FAILPOINTS: "admit.afterCommit@2" });
      const lines = Array.from({ length: 3000 }, (_, i) => opened(`crash#${i}`));
      const running = g.cli(
        ["journal", "append", "--token-file", g.tokens.get("ledger") as string, "--json"],
        `${lines.join("\n")}\n`,
      );
      await g.exited();
      await g.start();
      const r = await running;
      expect(outcomes(r.stdout)).toEqual(lines.map((_, i) => `${i + 1} admitted`));
      expect(r.code).toBe(0);
      const stored = journalRows(g, { kind: "run_event" });
      expect(stored.map((x) => x.event.run)).toEqual(lines.map((_, i) => `crash#${i}`));
    } finally {
      await g.dispose();
    }
  });
});
