/**
 * A hook call's idempotency key (issue 26, finding 10): from the payload's own ids where they name one
 * call, the same on the forwarder and the http path; none where they do not, so two calls are never
 * taken for one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AGENTS } from "../../../../src/shell/agents/adapters/registry.js";
import type { HookFormat } from "../../../../src/shell/agents/ingest/hook-format.js";
import * as keys from "../../../../src/shell/agents/ingest/hook-key.js";

type Payload = Readonly<Record<string, unknown>>;
const format = (name: string) => AGENTS.hook(name) as HookFormat;
const payloadKey = (name: string, harness: string, p: Payload) => keys.payloadKey(format(name), harness, p);
const forwarderKey = (name: string, harness: string, p: Payload) =>
  keys.forwarderKey(format(name), harness, p);
const runOf = (name: string, harness: string, p: Payload) => keys.runOf(format(name), harness, p);

const tool = (id: string, event = "PostToolUse") => ({
  session_id: "s1",
  hook_event_name: event,
  tool_name: "Bash",
  tool_input: { command: "ls" },
  tool_use_id: id,
});

describe("hook keys", () => {
  it("a tool call's key is its ids': the same payload, the same key; another id, event, session or harness, another", () => {
    const key = payloadKey("claude-code", "impl", tool("toolu_1"));
    expect(key).toMatch(/^hook:[0-9a-f]{64}$/);
    expect(payloadKey("claude-code", "impl", { ...tool("toolu_1"), tool_input: { command: "x" } })).toBe(key);
    for (const other of [
      payloadKey("claude-code", "impl", tool("toolu_2")),
      payloadKey("claude-code", "impl", tool("toolu_1", "PreToolUse")),
      payloadKey("claude-code", "impl", { ...tool("toolu_1"), session_id: "s2" }),
      payloadKey("claude-code", "review", tool("toolu_1")),
      payloadKey("codex", "impl", tool("toolu_1")),
    ])
      expect(other).not.toBe(key);
  });

  it("prompts and notifies are keyed by their own ids; SessionStart, Stop and SessionEnd have none", () => {
    const prompt = { session_id: "s1", hook_event_name: "UserPromptSubmit", prompt_id: "p1", turn_id: "t1" };
    expect(payloadKey("claude-code", "impl", prompt)).toBeDefined();
    expect(payloadKey("claude-code", "impl", { ...prompt, prompt_id: "p2" })).not.toBe(
      payloadKey("claude-code", "impl", prompt),
    );
    expect(payloadKey("codex", "impl", { ...prompt, turn_id: "t2" })).not.toBe(
      payloadKey("codex", "impl", prompt),
    );
    const notify = { type: "agent-turn-complete", "thread-id": "th", "turn-id": "tu" };
    expect(payloadKey("codex-notify", "impl", notify)).toBeDefined();
    expect(payloadKey("codex-notify", "impl", { ...notify, "turn-id": undefined })).toBeUndefined();
    for (const event of ["SessionStart", "Stop", "SessionEnd"])
      expect(payloadKey("claude-code", "impl", { session_id: "s1", hook_event_name: event })).toBeUndefined();
    // The forwarder makes one of its own for those: never the same twice.
    const stop = { session_id: "s1", hook_event_name: "Stop" };
    expect(forwarderKey("claude-code", "impl", stop)).not.toBe(forwarderKey("claude-code", "impl", stop));
  });

  it("any payload gives a key the daemon takes (1 to 128 characters) or none, and a run only with a session", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom(
            "session_id",
            "hook_event_name",
            "tool_use_id",
            "prompt_id",
            "turn_id",
            "thread-id",
            "type",
            "turn-id",
          ),
          fc.oneof(fc.string({ maxLength: 2000 }), fc.integer(), fc.constant(null)),
        ),
        fc.constantFrom("claude-code", "codex", "codex-notify"),
        (payload, adapter) => {
          const key = forwarderKey(adapter, "impl", payload);
          expect(key.length).toBeGreaterThan(0);
          expect(key.length).toBeLessThanOrEqual(128);
          const run = runOf(adapter, "impl", payload);
          const session = payload[adapter === "codex-notify" ? "thread-id" : "session_id"];
          if (run !== undefined) expect(run).toBe(`impl#${session}`);
        },
      ),
    );
  });
});
