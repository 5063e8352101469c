/**
 * Refusals are visible to the operator (issue 16): a real daemon counts every event Append refuses in
 * `harness_rule_journal_rejected_total{source,reason}`, `reason` from a closed set and never the
 * message, and logs a line per source and reason at most once an hour. And a request repeating an
 * idempotency key gets the first request's answer and admits nothing again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { journalRows } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";

describe("JournalService.Append's refusals", () => {
  const f = new TestFleet();
  let metricsUrl: string;
  beforeAll(async () => {
    metricsUrl = /metrics (http:[^\s,]+)/.exec(await f.start())?.[1] as string;
  });
  afterAll(() => f.dispose());

  it("are counted in harness_rule_journal_rejected_total{source,reason} and logged once per source and reason", async () => {
    const client = journalClient(
      { socketPath: f.socketPath },
      await readTokenFile(f.tokens.get("ledger") as string),
    );
    const opened = (fields: Record<string, unknown>) => ({
      kind: "run_event",
      event: { type: "opened", harness: "impl", run: "impl#1", ...fields },
    });
    const res = await client.append({
      events: [
        opened({ summary: "the agent said…" }),
        opened({ harness: "h\u001b[2J" }),
        opened({ harness: "h\u0007" }),
        opened({ harness: "h".repeat(300) }),
        opened({ is_error: "yes" }),
        opened({ type: "" }),
        opened({ type: "tool" }),
        { kind: "nonsense", event: { type: "x" } },
        opened({}),
      ],
    });
    expect(res.results.filter((r) => r.result.case === "rejected")).toHaveLength(8);
    const text = await (await fetch(metricsUrl)).text();
    const counted = text
      .split("\n")
      .filter((l) => l.startsWith("harness_rule_journal_rejected_total{"))
      .sort();
    expect(counted).toEqual([
      'harness_rule_journal_rejected_total{source="ledger",reason="bad_type"} 1',
      'harness_rule_journal_rejected_total{source="ledger",reason="control_character"} 2',
      'harness_rule_journal_rejected_total{source="ledger",reason="missing_field"} 1',
      'harness_rule_journal_rejected_total{source="ledger",reason="source_not_allowed"} 1',
      'harness_rule_journal_rejected_total{source="ledger",reason="too_long"} 1',
      'harness_rule_journal_rejected_total{source="ledger",reason="unknown_field"} 1',
      'harness_rule_journal_rejected_total{source="ledger",reason="unknown_kind"} 1',
    ]);
    const logged = f.daemonStdout.split("\n").filter((l) => l.includes("journal event rejected"));
    expect(logged).toHaveLength(7);
    expect(logged.filter((l) => l.includes('"reason":"control_character"'))).toHaveLength(1);
    // The message, and so the producer's text, is never a label or a log field.
    expect(text).not.toContain("2J");
    expect(logged.join("\n")).not.toContain("2J");
  });

  it("counts each event of a batch refused whole for its size as too_large", async () => {
    const client = journalClient(
      { socketPath: f.socketPath },
      await readTokenFile(f.tokens.get("graph") as string),
    );
    const event = { kind: "graph_event", event: { type: "edge_added" } };
    await expect(client.append({ events: Array.from({ length: 1_001 }, () => event) })).rejects.toThrow(
      /at most 1000 events/,
    );
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toContain('harness_rule_journal_rejected_total{source="graph",reason="too_large"} 1001');
  });

  it("answers a repeated idempotency key with the first answer and admits nothing again", async () => {
    const client = journalClient(
      { socketPath: f.socketPath },
      await readTokenFile(f.tokens.get("ledger") as string),
    );
    const req = {
      idempotencyKey: "retry-key-1",
      events: [
        { kind: "run_event", event: { type: "opened", harness: "impl", run: "impl#key" } },
        { kind: "run_event", event: { type: "tool", harness: "impl", run: "impl#key" } },
      ],
    };
    const first = await client.append(req);
    const again = await client.append(req);
    expect(again).toEqual(first);
    expect(first.results.map((r) => r.result.case)).toEqual(["admitted", "rejected"]);
    expect(journalRows(f).filter((r) => r.event.run === "impl#key")).toHaveLength(1);
    await expect(client.append({ ...req, idempotencyKey: "k".repeat(129) })).rejects.toThrow(
      /idempotency_key holds at most 128 characters/,
    );
  });
});
