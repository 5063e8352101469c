/**
 * What docs/security.md ("The agents' hook endpoint") promises of `[agents] listen`, against a real
 * daemon: the plain-HTTP listener serves the hook endpoint and nothing else (no RPC answers there), and
 * a body over the 8 MiB bound is refused with 413, recording nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_HOOK_PAYLOAD_BYTES } from "../../../src/shell/agents/hook-limits.js";
import { TestFleet } from "../daemon-harness.js";

let fleet: TestFleet;
let hooksUrl: string;

beforeAll(async () => {
  fleet = new TestFleet({ config: '[agents]\nlisten = "127.0.0.1:0"' });
  const started = await fleet.start();
  hooksUrl = /hooks (http:\S+)/.exec(started)?.[1] as string;
  expect(hooksUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/$/);
}, 30_000);

afterAll(() => fleet.dispose());

const runEvents = () =>
  fleet.query<{ n: number }>("SELECT COUNT(*) AS n FROM rule_journal WHERE kind = 'run_event'")[0]?.n;

describe("[agents] listen", () => {
  it("serves the hook endpoint only: an RPC method there gets 404, not an answer", async () => {
    const origin = new URL(hooksUrl).origin;
    const rpc = await fetch(`${origin}/harness.v1.RuleService/ListRules`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(rpc.status).toBe(404);
    expect(await rpc.text()).toBe("");
    expect(rpc.headers.get("x-harness-note")).toMatch(/^hook paths are \/hooks\/claude-code/);
  });

  it("refuses a body over 8 MiB with 413 and records nothing, before any token is asked for", async () => {
    const before = runEvents();
    const body = `{"session_id":"big","hook_event_name":"PreToolUse","pad":"${"x".repeat(MAX_HOOK_PAYLOAD_BYTES)}"}`;
    const r = await fetch(`${hooksUrl}claude-code?harness=impl`, { method: "POST", body });
    expect(r.status).toBe(413);
    expect(r.headers.get("x-harness-note")).toBe(
      `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`,
    );
    expect(runEvents()).toBe(before);
  });
});
