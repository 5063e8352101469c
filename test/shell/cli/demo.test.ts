/**
 * `harness demo` itself, against a real in-process daemon on a temporary store and socket. The daemon
 * runs the reference supervisor's stop command as the built program (`dist/`, which `npm test` builds
 * before the tests run).
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../../../src/shell/cli/commands/demo.js";
import { stopEntryPath } from "../../../src/shell/supervisor/stop-command.js";

beforeAll(() => {
  const file = stopEntryPath();
  expect(existsSync(file), `${file}: npm test builds dist/ before the tests run`).toBe(true);
});

describe("harness demo", () => {
  it("runs to exit 0, showing the rules fire, the hook's delivery and a hold refusing a firing", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDemo(
      // The scripted miner needs the built CLI: test/shell/demo/demo-miner.test.ts runs it.
      { seconds: 3, miner: false },
      { env: process.env, out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const text = out.join("\n");
    expect(text).toMatch(/rule_fired delivered: \S+ for \S+/);
    expect(text).toContain("nightly's scheduled firing skipped (nightly#3 closed skipped, reason rule_hold)");
    expect(text).toContain(
      "harness start nightly refused: nightly is held by rule budget-exhaustion-recurring",
    );
    expect(text).toMatch(/6 starter rules fired/);
    const dir = /directory {2}(\S+)/.exec(text)?.[1];
    expect(dir !== undefined && existsSync(dir)).toBe(false);
  });

  it("with --json prints its events as JSON lines: the start, each event, and the verdict", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDemo(
      { seconds: 3, json: true, miner: false },
      { env: process.env, out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const events = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ kind: "start", enforce: ["budget-exhaustion-recurring"] });
    const fired = events.find((e) => e.kind === "hook" && e.payload !== undefined);
    expect(fired?.payload).toMatchObject({ event: "rule_fired" });
    expect(events).toContainEqual(
      expect.objectContaining({ kind: "hold", message: expect.stringContaining("reason rule_hold") }),
    );
    for (const e of events.slice(1, -1)) expect(typeof e.t).toBe("number");
    expect(events.at(-1)).toMatchObject({ kind: "done", rules_fired: expect.any(Array) });
  });
});
