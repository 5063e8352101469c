/**
 * AgentStatusService.LastRows (issue 17, doctor's agents row) against a real daemon: the last run_event
 * row of each harness named, in the request's order, none for a harness without rows; more than 100
 * harnesses, or a name longer than any the daemon holds, is INVALID_ARGUMENT.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentStatusClient } from "../../../src/shell/rpc/client.js";
import { journalCount, journalRows } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

describe("AgentStatusService.LastRows", () => {
  const f = new TestFleet();
  beforeAll(async () => {
    await f.start();
    const row = (harness: string, n: number, type: string, extra: Record<string, unknown> = {}) => ({
      kind: "run_event",
      type,
      harness,
      run: `${harness}#${n}`,
      ...extra,
    });
    await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([row("impl", 1, "opened"), row("nightly", 1, "opened")]),
    );
    await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("observer") as string],
      jsonl([row("impl", 1, "tool", { action: "edit", adapter: "claude-code" })]),
    );
    // Counted by kind: the minute tick may land between the appends.
    await f.until(() => journalCount(f, { kind: "run_event" }) === 3, "the three rows");
  });
  afterAll(() => f.dispose());

  it("answers each harness's last run_event row in the request's order, and nothing for one without rows", async () => {
    const { rows } = await agentStatusClient({ socketPath: f.socketPath }).lastRows({
      harnesses: ["nightly", "absent", "impl"],
    });
    expect(rows.map((r) => [r.harness, r.type, r.source, r.run, r.adapter])).toEqual([
      ["nightly", "opened", "ledger", "nightly#1", ""],
      ["impl", "tool", "observer", "impl#1", "claude-code"],
    ]);
    const last = journalRows(f, { kind: "run_event", harness: "impl" }).at(-1);
    expect(rows[1]?.seq).toBe(BigInt(last?.seq ?? 0));
  });

  it("refuses more than 100 harnesses and an overlong name", async () => {
    const client = agentStatusClient({ socketPath: f.socketPath });
    for (const harnesses of [Array.from({ length: 101 }, (_, i) => `h${i}`), ["x".repeat(300)]]) {
      const e = await client.lastRows({ harnesses }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConnectError);
      expect((e as ConnectError).code).toBe(Code.InvalidArgument);
    }
  });
});
