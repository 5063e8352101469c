/**
 * JournalQueryService (read tier) against a real daemon: rows by kind, type and indexed fields, paged
 * and bounded, identifiers only; a windowed count as a rule on the last committed row sees it; and the
 * refusals, INVALID_ARGUMENT with the reason.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JournalQueryService } from "../../../src/shell/rpc/gen/harness/v1/journal_query_pb.js";
import { journalCount, journalRows, lastRow } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

let fleet: TestFleet;
/** The seq before the first tool row: a tick row may come first. */
let base = 0;
/** The seqs of tool rows `i`, counted from 0 as appended. */
const seqs = (...i: number[]) => i.map((n) => base + n + 1);
const client = () =>
  createClient(
    JournalQueryService,
    createConnectTransport({
      httpVersion: "1.1",
      baseUrl: "http://localhost",
      nodeOptions: { socketPath: fleet.socketPath },
    }),
  );

beforeAll(async () => {
  fleet = new TestFleet();
  await fleet.start();
  const tool = (i: number) => ({
    kind: "run_event",
    type: "tool",
    harness: i % 2 === 0 ? "nightly" : "triage",
    run: `r#${i}`,
    tool: "Bash",
    action: "exec",
    is_error: i % 3 === 0,
    paths: i % 4 === 0 ? ["a.go"] : [],
  });
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
    jsonl(Array.from({ length: 12 }, (_, i) => tool(i))),
  );
  expect(r.code, r.stderr).toBe(0);
  await fleet.until(() => journalCount(fleet) >= 12, "the rows");
  base = (journalRows(fleet, { type: "tool" })[0]?.seq ?? 1) - 1;
}, 60_000);

afterAll(() => fleet.dispose());

const text = (field: string, value: string) => ({ field, value: { case: "text" as const, value } });

describe("JournalQueryService", () => {
  it("QueryJournal filters by kind, type and indexed fields, pages by seq, and returns identifiers only", async () => {
    const c = client();
    const first = await c.queryJournal({
      kind: "run_event",
      type: "tool",
      fields: [text("harness", "nightly")],
      limit: 4,
    });
    expect(first.rows.map((r) => Number(r.seq))).toEqual(seqs(0, 2, 4, 6));
    expect(first.truncated).toBe(true);
    const next = await c.queryJournal({
      kind: "run_event",
      fields: [text("harness", "nightly")],
      afterSeq: first.nextAfterSeq,
    });
    expect(next.rows.map((r) => Number(r.seq))).toEqual(seqs(8, 10));
    expect(next.truncated).toBe(false);
    const row = first.rows[0];
    expect(row?.source).toBe("observer");
    expect(row?.fields.map((f) => f.field).sort()).toEqual(["action", "harness", "is_error", "run", "tool"]);
    expect(row?.paths).toEqual(["a.go"]);
    const withPath = await c.queryJournal({ fields: [text("path", "a.go")] });
    expect(withPath.rows.map((r) => Number(r.seq))).toEqual(seqs(0, 4, 8));
    const errors = await c.queryJournal({
      fields: [{ field: "is_error", value: { case: "flag", value: true } }],
    });
    expect(errors.rows.map((r) => Number(r.seq))).toEqual(seqs(0, 3, 6, 9));
  });

  it("CountJournal answers a primitive as a rule on the last committed row would", async () => {
    const c = client();
    const last = lastRow(fleet);
    const count = await c.countJournal({
      selector: [text("type", "tool"), text("harness", "triage")],
      within: "1h",
    });
    expect(count.number).toBe(6);
    expect(Number(count.lastSeq)).toBe(last?.seq);
    expect(Number(count.nowMs)).toBe(last?.at);
    const distinct = await c.countJournal({
      fn: "distinct",
      field: "harness",
      selector: [text("type", "tool")],
      within: "1h",
    });
    expect(distinct.number).toBe(2);
    const none = await c.countJournal({ fn: "exists", selector: [text("harness", "nobody")], within: "1h" });
    expect(none.truth).toBe(false);
  });

  it("refuses what a rule could not write, a limit over 1,000 and an unknown field, INVALID_ARGUMENT", async () => {
    const c = client();
    const refused = async (call: Promise<unknown>, reason: RegExp) => {
      const e = await call.then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ConnectError);
      expect((e as ConnectError).code).toBe(Code.InvalidArgument);
      expect((e as ConnectError).rawMessage).toMatch(reason);
    };
    await refused(c.countJournal({ selector: [text("type", "tool")], within: "30d" }), /no "d" unit/);
    await refused(c.queryJournal({ limit: 1001 }), /not from 1 to 1000/);
    await refused(c.queryJournal({ fields: [text("summary", "x")] }), /not an indexed field/);
    await refused(c.countJournal({ fn: "sum", selector: [], within: "1h" }), /not count, distinct or exists/);
  });
});
