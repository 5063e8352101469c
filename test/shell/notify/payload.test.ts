import { describe, expect, it } from "vitest";
import { REDACTED } from "../../../src/core/redact.js";
import { buildPayload, hookEnv } from "../../../src/shell/notify/index.js";
import { ruleFired, T0 } from "./helpers.js";

describe("buildPayload", () => {
  it("carries the common fields, the rule_fired fields and the explain hint, time in whole seconds", () => {
    expect(buildPayload(ruleFired(), "kitt")).toEqual({
      version: 1,
      event: "rule_fired",
      harness: "reduit-agent",
      host: "kitt",
      state: "running",
      message: "verify failed 3 times in 10m on reduit-agent",
      cause: "npm test",
      hint: "harness rules explain f-0001",
      time: "2026-12-01T21:52:30Z",
      rule: "verify-failures",
      fire_id: "f-0001",
      level: "notify",
      declared_level: "hold",
      action: "notify",
    });
    expect(new Date(buildPayload(ruleFired(), "kitt").time).getTime()).toBe(T0 - 789);
  });

  it("keeps the field order of the supervisor's payload", () => {
    expect(Object.keys(buildPayload(ruleFired(), "kitt"))).toEqual([
      "version",
      "event",
      "harness",
      "host",
      "state",
      "message",
      "cause",
      "hint",
      "time",
      "rule",
      "fire_id",
      "level",
      "declared_level",
      "action",
    ]);
  });

  it("omits harness when empty, and only harness", () => {
    const p = buildPayload(ruleFired({ harness: "", state: "", cause: "" }), "kitt");
    expect(p).not.toHaveProperty("harness");
    expect(p.state).toBe("");
    expect(p.cause).toBe("");
  });

  it("redacts every string and folds free text onto one line", () => {
    const token = "abcdefghijklmnop1234";
    const p = buildPayload(
      ruleFired({
        message: `curl -H "Authorization: Bearer ${token}"\nfailed`,
        cause: "push to https://bob:hunter22@forge.example/org/repo",
        harness: "h-token=s3cr3t",
        rule: "ghp_0123456789abcdefghijABCDEFGHIJ",
      }),
      "kitt",
    );
    const json = JSON.stringify(p);
    for (const secret of [token, "hunter22", "s3cr3t", "ghp_0123456789"]) expect(json).not.toContain(secret);
    expect(p.message).toBe(`curl -H "Authorization: Bearer ${REDACTED}" failed`);
    expect(p.cause).toBe(`push to https://${REDACTED}@forge.example/org/repo`);
    expect(p.harness).toBe(`h-token=${REDACTED}`);
    expect(p.rule).toBe(REDACTED);
  });

  it("gives the hold events their fields and hints, without the rule_fired ones", () => {
    const base = { harness: "h", state: "held", message: "m", cause: "c", rule: "r", fireId: "f-9", at: T0 };
    const hold = buildPayload({ event: "rule_hold", ...base }, "kitt");
    expect(hold.hint).toBe("harness rules clear h");
    expect(hold).not.toHaveProperty("level");
    expect(hold).not.toHaveProperty("action");
    const released = buildPayload({ event: "rule_hold_released", ...base }, "kitt");
    expect(released).toMatchObject({ event: "rule_hold_released", rule: "r", fire_id: "f-9" });
    expect(released.hint).toBe("harness rules explain f-9");
  });
});

describe("hookEnv", () => {
  it("strips every inherited HARNESS_NOTIFY_*, keeps the rest, and sets this delivery's", () => {
    const p = buildPayload(ruleFired({ message: "token=abc123 leaked" }), "kitt");
    const env = hookEnv(
      { PATH: "/usr/bin", HOME: "/home/op", HARNESS_NOTIFY_STALE: "x", HARNESS_NOTIFY_EVENT: "failed" },
      p,
    );
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/op",
      HARNESS_NOTIFY_EVENT: "rule_fired",
      HARNESS_NOTIFY_HARNESS: "reduit-agent",
      HARNESS_NOTIFY_HOST: "kitt",
      HARNESS_NOTIFY_STATE: "running",
      HARNESS_NOTIFY_MESSAGE: `token=${REDACTED} leaked`,
    });
  });

  it("sets HARNESS_NOTIFY_HARNESS empty for a fleet event", () => {
    expect(hookEnv({}, buildPayload(ruleFired({ harness: "" }), "kitt")).HARNESS_NOTIFY_HARNESS).toBe("");
  });
});
