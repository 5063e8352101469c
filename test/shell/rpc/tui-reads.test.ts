/**
 * The reads the TUI needs (issue 20, SPEC-0029 REQ-17/REQ-19), against a real daemon: ListFires paged
 * forward by after_seq (and back by before_seq, the MCP gateway's list_fires cursor), CountFires (fires per rule per hour by mode) and ListAnnotatedNodes, paged.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import type { FireInfo } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { METHOD_TIERS } from "../../../src/shell/rpc/tiers.js";
import { fires } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const HARNESSES = ["h0", "h1", "h2", "h3", "h4"];
const budget = (harness: string, n: number) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome: "budget_exceeded",
});

describe("the TUI's reads", () => {
  const f = new TestFleet();
  beforeAll(async () => {
    await f.start();
    const rows = HARNESSES.flatMap((h) => [budget(h, 1), budget(h, 2)]);
    const r = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl(rows),
    );
    expect(r.code, r.stderr).toBe(0);
    await f.until(() => fires(f).length >= HARNESSES.length, "five fires");
  });
  afterAll(() => f.dispose());

  it("are in the read tier", () => {
    expect(METHOD_TIERS.get("harness.v1.RuleService/CountFires")).toBe("read");
    expect(METHOD_TIERS.get("harness.v1.RuleService/ListAnnotatedNodes")).toBe("read");
  });

  it("ListFires with after_seq pages forward, oldest first, and the pages join into the whole log", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const newestFirst = (await client.listFires({})).fires.map((x) => x.fireId);
    const pages: FireInfo[][] = [];
    let after = 0n;
    for (;;) {
      const page = await client.listFires({ afterSeq: after, limit: 2 });
      pages.push(page.fires);
      after = page.nextAfterSeq;
      if (!page.truncated) break;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((x) => x.fireId)).toEqual([...newestFirst].reverse());
    const last = pages.flat().at(-1) as FireInfo;
    expect(after).toBe(last.seq);
    const none = await client.listFires({ afterSeq: after });
    expect(none).toMatchObject({ fires: [], truncated: false, nextAfterSeq: after });
  });

  it("ListFires with before_seq pages back, newest first, and the pages join into the whole log", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const rule = "budget-exhaustion-recurring";
    const newestFirst = (await client.listFires({ rule })).fires.map((x) => x.fireId);
    const pages: FireInfo[][] = [];
    let before: bigint | undefined;
    for (;;) {
      const page = await client.listFires({
        rule,
        limit: 2,
        ...(before === undefined ? {} : { beforeSeq: before }),
      });
      pages.push(page.fires);
      if (!page.truncated) break;
      before = page.nextBeforeSeq;
      expect(before).toBe(page.fires.at(-1)?.seq);
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((x) => x.fireId)).toEqual(newestFirst);
  });

  it("ListFires with after_seq refuses the newest-first filters", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const e = (await client
      .listFires({ afterSeq: 0n, rule: "budget-exhaustion-recurring" })
      .catch((x: unknown) => x)) as ConnectError;
    expect(e).toBeInstanceOf(ConnectError);
    expect(e.code).toBe(Code.InvalidArgument);
  });

  it("CountFires counts fires per rule, hour and mode in the store, and refuses more than 7 days", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const res = await client.countFires({});
    expect(res.counts.map((c) => [c.rule, c.mode, c.fires])).toEqual([
      ["budget-exhaustion-recurring", "active", HARNESSES.length],
    ]);
    const c = res.counts[0];
    expect(Number(c?.hourMs) % 3_600_000).toBe(0);
    expect(Number(res.nowMs) - Number(c?.hourMs)).toBeLessThan(3_600_000);
    expect(Number(res.nowMs) - Number(res.fromMs)).toBeGreaterThanOrEqual(86_400_000);
    const e = (await client
      .countFires({ sinceMs: 8n * 86_400_000n })
      .catch((x: unknown) => x)) as ConnectError;
    expect(e.code).toBe(Code.InvalidArgument);
  });

  it("ListAnnotatedNodes lists annotated nodes in node order, paged by after", async () => {
    const client = ruleClient({ socketPath: f.socketPath });
    const first = await client.listAnnotatedNodes({ limit: 2 });
    expect(first.nodes.map((n) => n.node)).toEqual(["harness:h0", "harness:h1"]);
    expect(first.truncated).toBe(true);
    expect(first.nodes[0]?.annotations).toBe(1);
    expect(first.nodes[0]?.lastAtMs).toBeGreaterThan(0n);
    const rest = await client.listAnnotatedNodes({ after: "harness:h1" });
    expect(rest.nodes.map((n) => n.node)).toEqual(["harness:h2", "harness:h3", "harness:h4"]);
    expect(rest.truncated).toBe(false);
  });
});
