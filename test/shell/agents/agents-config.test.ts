/** `[agents]`'s keys: listen (loopback only without TLS, off when ""), on_unreachable, verify_patterns, stale_after, tell. */
import { describe, expect, it } from "vitest";
import { loadGlobalConfig } from "../../../src/shell/config/global-config.js";

const load = (text: string) => loadGlobalConfig(text, "/etc/harness.toml", { HOME: "/home/u" });

describe("[agents]", () => {
  it("defaults: listen on 127.0.0.1:7434, allow when unreachable, no extra verify patterns", () => {
    const r = load("");
    expect(r.ok && r.config.agents).toEqual({
      listen: { host: "127.0.0.1", port: 7434 },
      onUnreachable: "allow",
      verifyPatterns: [],
      staleAfter: 12 * 3_600_000,
      tell: ["annotate", "notify"],
    });
  });

  it('reads its keys; listen = "" turns the http endpoint off', () => {
    const r = load(
      '[agents]\nlisten = ""\non_unreachable = "deny"\nverify_patterns = ["just check", "tox"]\nstale_after = "2h"\ntell = ["stop", "annotate"]',
    );
    expect(r.ok && r.config.agents).toEqual({
      listen: undefined,
      onUnreachable: "deny",
      verifyPatterns: ["just check", "tox"],
      staleAfter: 2 * 3_600_000,
      tell: ["stop", "annotate"],
    });
  });

  it("refuses a listen address off loopback, an unknown on_unreachable, an unknown key", () => {
    const r = load('[agents]\nlisten = "0.0.0.0:7434"\non_unreachable = "maybe"\nport = 1');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.key, e.message])).toEqual([
      [
        "listen",
        "0.0.0.0 is not a loopback address: a plaintext listener there would carry tokens and rows in the clear; set [server] tls_cert_file and tls_key_file, or listen on loopback",
      ],
      ["on_unreachable", 'must be one of "allow", "deny"'],
      ["port", "unknown key (expected one of: listen, on_unreachable, verify_patterns, stale_after, tell)"],
    ]);
  });

  it("tell is a list of distinct levels; an empty list tells agents nothing", () => {
    expect(load("[agents]\ntell = []").ok && load("[agents]\ntell = []")).toMatchObject({
      config: { agents: { tell: [] } },
    });
    for (const [text, message] of [
      ['tell = ["notify", "shout"]', 'must be a list of "annotate", "notify", "hold", "stop"'],
      ['tell = "notify"', 'must be a list of "annotate", "notify", "hold", "stop"'],
      ['tell = ["notify", "notify"]', "must not repeat a value"],
    ]) {
      const r = load(`[agents]\n${text}`);
      expect(r.ok ? [] : r.errors.map((e) => [e.key, e.message])).toEqual([["tell", message]]);
    }
  });
});
