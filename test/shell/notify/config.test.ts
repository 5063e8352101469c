import { describe, expect, it } from "vitest";
import { DEFAULT_NOTIFY_CONFIG, NotifyConfigError, notifyConfig } from "../../../src/shell/notify/index.js";

describe("notifyConfig", () => {
  it("fills the supervisor's defaults", () => {
    expect(notifyConfig({ command: ["/usr/local/bin/page-me", "--loud"] })).toEqual({
      command: ["/usr/local/bin/page-me", "--loud"],
      timeoutMs: 15_000,
      cooldownMs: 15 * 60_000,
      events: ["rule_fired", "rule_hold", "rule_hold_released"],
      workers: 4,
      queueSize: 64,
    });
    expect(notifyConfig({})).toEqual(DEFAULT_NOTIFY_CONFIG);
  });

  it("holds timeout to 1s..5m and cooldown to 0..24h", () => {
    expect(notifyConfig({ timeoutMs: 1_000, cooldownMs: 0 })).toMatchObject({
      timeoutMs: 1_000,
      cooldownMs: 0,
    });
    expect(notifyConfig({ timeoutMs: 300_000, cooldownMs: 86_400_000 })).toMatchObject({
      timeoutMs: 300_000,
      cooldownMs: 86_400_000,
    });
    expect(() => notifyConfig({ timeoutMs: 999 })).toThrow(/^\[notify\] timeout: /);
    expect(() => notifyConfig({ timeoutMs: 300_001 })).toThrow(/^\[notify\] timeout: /);
    expect(() => notifyConfig({ cooldownMs: -1 })).toThrow(/^\[notify\] cooldown: /);
    expect(() => notifyConfig({ cooldownMs: 86_400_001 })).toThrow(/^\[notify\] cooldown: /);
  });

  it("refuses an empty, unknown or repeated event", () => {
    expect(notifyConfig({ events: ["rule_hold"] }).events).toEqual(["rule_hold"]);
    expect(() => notifyConfig({ events: [] })).toThrow(/^\[notify\] events: must list at least one/);
    expect(() => notifyConfig({ events: ["rule_fired", "failed"] })).toThrow(/unknown event "failed"/);
    expect(() => notifyConfig({ events: ["rule_fired", "rule_fired"] })).toThrow(/lists "rule_fired" twice/);
  });

  it("refuses a relative or blank argv[0]", () => {
    for (const command of [["notify.sh"], ["./notify.sh"], [" "], []]) {
      const err = (() => {
        try {
          notifyConfig({ command });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(NotifyConfigError);
      expect(err).toMatchObject({ key: "command" });
    }
  });
});
