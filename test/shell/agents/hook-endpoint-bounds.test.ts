/**
 * What docs/security.md ("The agents' hook endpoint") promises of `[agents] listen`, against a real
 * daemon: the plain-HTTP listener serves the hook endpoint and nothing else (no RPC answers there), and
 * a body declared over the 8 MiB bound is refused with 413, recording nothing. Only headers are sent:
 * the daemon closes the connection after its 413, so a client still writing the body may see EPIPE.
 * A facts envelope (decision 0017) has room for the facts only: the payload inside keeps its own bound.
 */

import * as fs from "node:fs";
import * as http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HOOK_FACTS_HEADER,
  LEDGER_TOKEN_HEADER,
  MAX_FACTS_BYTES,
  MAX_HOOK_PAYLOAD_BYTES,
} from "../../../src/shell/agents/ingest/hook-limits.js";
import { envelopeBody } from "../../../src/shell/agents/ingest/supplied-facts.js";
import { journalCount } from "../../support/store-reads.js";
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

const runEvents = () => journalCount(fleet, { kind: "run_event" });

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

  it("refuses a body declared over 8 MiB with 413 and records nothing, before any token is asked for", async () => {
    const before = runEvents();
    // Only the headers are sent: the answer comes from the declared length, before any body is read.
    const url = new URL(`${hooksUrl}claude-code?harness=impl`);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(url, {
        method: "POST",
        headers: { "content-length": String(MAX_HOOK_PAYLOAD_BYTES + 1) },
      });
      req.on("response", (r) => {
        resolve(r);
        req.destroy();
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers["x-harness-note"]).toBe(
      `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`,
    );
    expect(runEvents()).toBe(before);
  });

  it("refuses a facts envelope whose payload inside is over the payload's bound, though the envelope is within its own", async () => {
    const before = runEvents();
    const token = (source: "observer" | "ledger") =>
      fs.readFileSync(fleet.tokens.get(source) as string, "utf8").trim();
    const payload = Buffer.from(
      JSON.stringify({
        session_id: "s-big",
        transcript_path: "/t.jsonl",
        cwd: "/repo",
        hook_event_name: "SessionStart",
        source: "startup",
        pad: "x".repeat(MAX_HOOK_PAYLOAD_BYTES),
      }),
    );
    const body = envelopeBody(payload, {}, Date.now());
    expect(body.byteLength).toBeLessThan(MAX_HOOK_PAYLOAD_BYTES + MAX_FACTS_BYTES);
    const res = await fetch(`${hooksUrl}claude-code?harness=impl`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token("observer")}`,
        [LEDGER_TOKEN_HEADER]: token("ledger"),
        [HOOK_FACTS_HEADER]: "1",
        "content-type": "application/json",
      },
      body,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("x-harness-note")).toBe(
      `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`,
    );
    expect(runEvents()).toBe(before);
  });
});
