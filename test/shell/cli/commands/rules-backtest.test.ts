import { describe, expect, it } from "vitest";
import type { ReplayedFire } from "../../../../src/core/backtest.js";
import type { BacktestReport } from "../../../../src/shell/backtest/replay.js";
import { diffLines, reportJson } from "../../../../src/shell/cli/commands/rules-backtest.js";

const report = (at: number, untilAt: number): BacktestReport => ({
  start: { rule: "r", hash: "h".repeat(64), fromSeq: 1, toSeq: 2 },
  sinceMs: 86_400_000,
  fires: [
    {
      seq: 1,
      at,
      kind: "run_event",
      type: "closed",
      target: { kind: "harness", key: "nightly" },
      declaredLevel: "hold",
      level: "hold",
      mode: "active",
      message: "",
      hold: { until: { seq: 2, at: untilAt } },
    },
  ],
  counts: {
    rows: 2,
    evaluations: 2,
    evalErrors: 0,
    storeErrors: 0,
    suppressed: 0,
    costExceeded: 0,
    fires: 1,
  },
  ranOn: "store",
});

describe("rules backtest --json", () => {
  it("writes a fire's time and its hold span as RFC 3339, the epoch included", () => {
    const json = reportJson(report(0, 60_000));
    expect(json.fires[0]?.at).toBe("1970-01-01T00:00:00Z");
    expect(json.fires[0]?.hold_span).toEqual({
      from: "1970-01-01T00:00:00Z",
      until: "1970-01-01T00:01:00Z",
      until_seq: 2,
    });
  });
});

describe("rules backtest --diff", () => {
  it("lists added and removed fires with their messages escaped for the terminal", () => {
    const base = report(0, 60_000);
    const fire = (seq: number, message: string) => ({ ...(base.fires[0] as ReplayedFire), seq, message });
    const lines = diffLines({
      ...base,
      fires: [fire(1, "both"), fire(3, "new \u001b[2Jwiped\u202eevil")],
      loaded: {
        hash: "c".repeat(64),
        source: { kind: "policy", repo: "ops" },
        fires: [fire(1, "both, reworded"), fire(2, "old")],
        counts: base.counts,
      },
    });
    const text = lines.join("\n");
    expect(text).toContain(
      "against the loaded r (cccccccccccc, from the policy repo ops) over the same rows: 1 fire added, 1 removed",
    );
    expect(text).toMatch(/^3\s+.*harness nightly\s+hold\s+new \\u\{1b\}\[2Jwiped\\u\{202e\}evil$/m);
    expect(text).toMatch(/^2\s+.*old$/m);
    expect(text).not.toContain("both");
    expect(text).not.toContain("\u001b");
    expect(text).not.toContain("\u202e");
  });
});
