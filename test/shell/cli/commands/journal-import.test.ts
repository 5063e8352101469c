/**
 * `harness journal import` with the built CLI: a line that is not UTF-8 text or holds a control
 * character is refused as `FILE:LINE: reason`, never stored rewritten as U+FFFD, and the others are
 * imported; a byte order mark is accepted at the start of the first line only. A line keeps the
 * hook-fed mark of the journal it came from, and its `admitted_at` unless that decreases.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { journalRows } from "../../../support/store-reads.js";
import { TestFleet } from "../../daemon-harness.js";

const opened = (run: string) =>
  `{"kind":"run_event","type":"opened","at":"2026-01-05T10:00:00Z","harness":"impl","run":"${run}"}`;

describe("harness journal import", () => {
  const f = new TestFleet();
  afterAll(() => f.dispose());
  const importFile = async (name: string, bytes: Uint8Array | string) => {
    const file = path.join(f.root, name);
    fs.writeFileSync(file, bytes);
    const r = await f.cli(["journal", "import", file, "--store", f.storePath]);
    return {
      ...r,
      refusals: r.stderr
        .split("\n")
        .filter((l) => l.startsWith(file))
        .map((l) => l.slice(file.length)),
    };
  };
  const runs = () => journalRows(f, { kind: "run_event" }).map((r) => ({ run: r.event.run }));

  it("refuses a line that is not UTF-8 or holds a control character, with its line number, and imports the rest", async () => {
    const bad = Buffer.from(opened("impl#2X"));
    bad[bad.indexOf("X")] = 0xff;
    const r = await importFile(
      "bad.jsonl",
      Buffer.concat([
        Buffer.from(`${opened("impl#1")}\n`),
        bad,
        Buffer.from(`\n${opened("impl#3\\u001b[2J")}\n${opened("impl#4")}\n`),
      ]),
    );
    expect(r.code).toBe(1);
    expect(r.refusals).toEqual([":2: not UTF-8 text", ":3: run holds a control character (U+001B)"]);
    expect(runs()).toEqual([{ run: "impl#1" }, { run: "impl#4" }]);
  });

  it("accepts a byte order mark at the start of the first line, and refuses one anywhere else saying so", async () => {
    const r = await importFile("bom.jsonl", `\ufeff${opened("impl#5")}\n\ufeff${opened("impl#6")}\n`);
    expect(r.refusals).toEqual([":2: a byte order mark (U+FEFF) may only begin the first line"]);
    expect(runs().at(-1)).toEqual({ run: "impl#5" });
  });

  it("keeps a hook-fed row's mark, from the journal the line came from, and refuses a mark that is no bool", async () => {
    const marked = (run: string, mark: string) => `${opened(run).slice(0, -1)},"hook_fed":${mark}}`;
    const r = await importFile(
      "hook-fed.jsonl",
      `${marked("impl#7", "true")}\n${marked("impl#8", '"yes"')}\n`,
    );
    expect(r.refusals).toEqual([":2: hook_fed must be a bool"]);
    expect(journalRows(f, { run: "impl#7" }).map((r) => r.event.hook_fed)).toEqual([true]);
  });

  it("refuses a line whose admitted_at is earlier than the row before it, and imports the rest", async () => {
    const admitted = (run: string, at: string) => `${opened(run).slice(0, -1)},"admitted_at":"${at}"}`;
    const r = await importFile(
      "admitted.jsonl",
      `${admitted("impl#9", "2099-01-01T00:00:02Z")}\n${admitted("impl#10", "2099-01-01T00:00:01Z")}\n${opened("impl#11")}\n`,
    );
    expect(r.refusals).toEqual([
      ":2: admitted_at 2099-01-01T00:00:01Z is earlier than the row before it; it must not decrease",
    ]);
    expect(runs().slice(-2)).toEqual([{ run: "impl#9" }, { run: "impl#11" }]);
  });
});
