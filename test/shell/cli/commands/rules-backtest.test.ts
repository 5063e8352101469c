import { describe, expect, it } from "vitest";
import type { BacktestReport } from "../../../../src/shell/backtest/replay.js";
import { reportJson } from "../../../../src/shell/cli/commands/rules-backtest.js";

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
