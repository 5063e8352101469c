/**
 * Hostile RPC input (SPEC-0029 REQ-17, issue 6) against a real daemon over its real socket: oversized
 * messages, invalid UTF-8, absurd ranges, page sizes and names, and malformed bodies for both Connect
 * codecs. Each gets INVALID_ARGUMENT or RESOURCE_EXHAUSTED promptly (every call has a deadline, and a
 * deadline exceeded fails the test), and the daemon is unaffected: a normal read answers and a
 * producer's Append is still admitted.
 */
import * as http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import { journalClient, ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { AppendRequestSchema } from "../../../src/shell/rpc/gen/harness/v1/journal_pb.js";
import { ErrorDetailSchema, ErrorReason } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { journalCount, journalRows } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";

const DEADLINE_MS = 10_000;
const MiB = 1024 * 1024;
const OVER_LIMIT = 4 * MiB + 1;

const opened = (run: string) => ({
  kind: "run_event",
  event: { type: "opened", at: "2026-01-05T10:00:00Z", harness: "impl", run },
});

interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One HTTP/1.1 POST over the daemon's socket, failing rather than hanging past the deadline. */
function post(
  socketPath: string,
  route: string,
  contentType: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        method: "POST",
        path: route,
        headers: { "content-type": contentType, "connect-protocol-version": "1", ...headers },
        timeout: DEADLINE_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer from ${route} within ${DEADLINE_MS} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** The Connect error code of a unary response (its JSON error body), or "ok". */
function unaryCode(r: RawResponse): string {
  if (r.status === 200) return "ok";
  return (JSON.parse(r.body.toString("utf8")) as { code: string }).code;
}

/**
 * What connect-es answers for a binary body it cannot decode (invalid UTF-8 in a string, a truncated
 * field, nesting past protobuf-es's depth of 100): INTERNAL, "parse binary: …", before any interceptor
 * or handler runs. The code is the library's (docs/security.md); the JSON codec's is INVALID_ARGUMENT.
 */
function binaryRefusal(r: RawResponse): string {
  const { code, message } = JSON.parse(r.body.toString("utf8")) as { code: string; message: string };
  return `${r.status} ${code}: ${message.slice(0, message.indexOf(":") + 1)}`;
}
const BINARY_REFUSED = "500 internal: parse binary:";

/** The Connect error code a server stream ended with (its end-stream envelope), or "ok". */
function streamCode(r: RawResponse): string {
  let at = 0;
  while (at + 5 <= r.body.length) {
    const flags = r.body[at] as number;
    const len = r.body.readUInt32BE(at + 1);
    const data = r.body.subarray(at + 5, at + 5 + len);
    at += 5 + len;
    if ((flags & 0b10) !== 0) {
      const end = JSON.parse(data.toString("utf8")) as { error?: { code: string } };
      return end.error?.code ?? "ok";
    }
  }
  throw new Error(`no end-stream message in ${r.body.length} bytes (status ${r.status})`);
}

/** A stream envelope: flags, a big-endian length, the message. */
const envelope = (data: Uint8Array, length = data.length): Buffer => {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, data]);
};

/** A protobuf length-delimited field holding raw bytes. */
function lengthDelimited(field: number, bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(bytes.length)]), bytes]);
}

const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
};

/**
 * The bytes of a protobuf Value nested `depth` deep: Value{list_value: ListValue{values: [Value{…}]}}.
 * Each level only prefixes a tag and a length to the one inside it, so the headers are computed from
 * the innermost (empty) Value outwards and written from the outermost in.
 */
function nestedLists(depth: number): Buffer {
  const headers: number[][] = [];
  let inner = 0;
  for (let i = 0; i < depth; i++) {
    const list = [0x0a, ...varint(inner)];
    const value = [0x32, ...varint(list.length + inner)];
    headers.push([...value, ...list]);
    inner += value.length + list.length;
  }
  return Buffer.from(headers.reverse().flat());
}

const INVALID_UTF8 = Buffer.from([0x6e, 0xff, 0xfe, 0x6f]); // "n", two bytes no UTF-8 text holds, "o"

describe("hostile RPC input", () => {
  const f = new TestFleet();
  let producer: string;
  const rule = "/harness.v1.RuleService/";
  const journal = "/harness.v1.JournalService/Append";
  const reader = () => ruleClient({ socketPath: f.socketPath });
  let control: string;
  const controller = () => ruleClient({ socketPath: f.socketPath }, control);
  const failure = async (call: Promise<unknown>): Promise<ConnectError> => {
    const e = await call.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e, "the call should have failed").toBeInstanceOf(ConnectError);
    return e as ConnectError;
  };
  const opts = { timeoutMs: DEADLINE_MS };

  beforeAll(async () => {
    await f.start();
    producer = await readTokenFile(f.tokens.get("ledger") as string);
    control = await readTokenFile(controlTokenPath(f.env));
  });
  afterAll(() => f.dispose());

  describe("oversized messages", () => {
    it("refuses a unary request over readMaxBytes with RESOURCE_EXHAUSTED, in either codec", async () => {
      const big = "x".repeat(OVER_LIMIT);
      expect((await failure(reader().getRule({ name: big }, opts))).code).toBe(Code.ResourceExhausted);
      const json = await post(
        f.socketPath,
        `${rule}GetRule`,
        "application/json",
        Buffer.from(JSON.stringify({ name: big })),
      );
      expect(unaryCode(json)).toBe("resource_exhausted");
    });

    it("refuses an Append over readMaxBytes with RESOURCE_EXHAUSTED and journals none of it", async () => {
      const events = Array.from({ length: 600 }, (_, i) => ({
        kind: "run_event",
        event: {
          type: "opened",
          at: "2026-01-05T10:00:00Z",
          harness: "impl",
          run: `big#${i}`,
          repo: "r".repeat(8_000),
        },
      }));
      const e = await failure(journalClient({ socketPath: f.socketPath }, producer).append({ events }, opts));
      expect(e.code).toBe(Code.ResourceExhausted);
      expect(journalRows(f).filter((r) => JSON.stringify(r.event).includes("big#"))).toEqual([]);
    });

    it("ends a stream whose request envelope claims more than readMaxBytes with RESOURCE_EXHAUSTED, without waiting for the bytes", async () => {
      const r = await post(
        f.socketPath,
        `${rule}WatchEvents`,
        "application/connect+proto",
        envelope(Buffer.alloc(16), 0xffff_ffff),
      );
      expect(streamCode(r)).toBe("resource_exhausted");
    });
  });

  describe("invalid UTF-8 in string fields", () => {
    it("refuses it in a request's string: INVALID_ARGUMENT in JSON, the binary codec's refusal in protobuf", async () => {
      const r = await post(
        f.socketPath,
        `${rule}GetRule`,
        "application/proto",
        lengthDelimited(1, INVALID_UTF8),
      );
      expect(binaryRefusal(r)).toBe(BINARY_REFUSED);
      const held = await post(
        f.socketPath,
        `${rule}CheckAdmission`,
        "application/proto",
        lengthDelimited(1, INVALID_UTF8),
      );
      expect(binaryRefusal(held)).toBe(BINARY_REFUSED);
      const json = await post(
        f.socketPath,
        `${rule}GetRule`,
        "application/json",
        Buffer.concat([Buffer.from('{"name":"'), INVALID_UTF8, Buffer.from('"}')]),
      );
      expect(unaryCode(json)).toBe("invalid_argument");
    });

    it("refuses it in an event's field in either codec, journaling nothing", async () => {
      // A valid Append whose event carries the marker "n~~o", then the marker's bytes replaced by ones
      // that are no UTF-8.
      const valid = toBinary(
        AppendRequestSchema,
        create(AppendRequestSchema, {
          events: [
            {
              kind: "run_event",
              event: { type: "opened", at: "2026-01-05T10:00:00Z", harness: "impl", run: "n~~o" },
            },
          ],
        }),
      );
      const at = Buffer.from(valid).indexOf("n~~o");
      expect(at).toBeGreaterThan(0);
      const corrupted = Buffer.from(valid);
      INVALID_UTF8.copy(corrupted, at);
      const r = await post(f.socketPath, journal, "application/proto", corrupted, {
        authorization: `Bearer ${producer}`,
      });
      expect(binaryRefusal(r)).toBe(BINARY_REFUSED);
      const json = Buffer.concat([
        Buffer.from(
          '{"events":[{"kind":"run_event","event":{"type":"opened","at":"2026-01-05T10:00:00Z","harness":"impl","run":"',
        ),
        INVALID_UTF8,
        Buffer.from('"}}]}'),
      ]);
      const rj = await post(f.socketPath, journal, "application/json", json, {
        authorization: `Bearer ${producer}`,
      });
      expect(unaryCode(rj)).toBe("invalid_argument");
      expect(journalCount(f, { kind: "run_event" })).toBe(0);
    });

    it("rejects an event whose field escapes half a surrogate pair: valid JSON, no Unicode text", async () => {
      const body = Buffer.from(
        '{"events":[{"kind":"run_event","event":{"type":"opened","harness":"impl","run":"impl#\\ud800"}}]}',
      );
      const r = await post(f.socketPath, journal, "application/json", body, {
        authorization: `Bearer ${producer}`,
      });
      expect(r.status).toBe(200);
      const { results } = JSON.parse(r.body.toString("utf8")) as {
        results: { rejected?: { reason: string } }[];
      };
      expect(results[0]?.rejected?.reason).toMatch(/^run is not well-formed Unicode/);
      expect(journalCount(f, { kind: "run_event" })).toBe(0);
    });
  });

  describe("control characters in an event's strings", () => {
    it("rejects a NUL, an ESC or a C1 control in any field, naming the field, and journals none of it", async () => {
      const client = journalClient({ socketPath: f.socketPath }, producer);
      const event = (fields: Record<string, unknown>) => ({
        kind: "run_event",
        event: { type: "opened", at: "2026-01-05T10:00:00Z", harness: "impl", run: "impl#1", ...fields },
      });
      const res = await client.append(
        {
          events: [
            event({ run: "impl#\u0000" }),
            event({ harness: "\u001b]0;owned\u0007impl" }),
            event({ repo: "r\u009b" }),
          ],
        },
        opts,
      );
      expect(
        res.results.map((r) => (r.result.case === "rejected" ? r.result.value.reason : r.result.case)),
      ).toEqual([
        "run holds a control character (U+0000)",
        "harness holds a control character (U+001B)",
        "repo holds a control character (U+009B)",
      ]);
      expect(journalCount(f, { kind: "run_event" })).toBe(0);
    });
  });

  describe("field names and a missing type", () => {
    it("refuses a __proto__ field like constructor, in either codec, rather than dropping it", async () => {
      for (const name of ["__proto__", "constructor"]) {
        const body = `{"events":[{"kind":"run_event","event":{"type":"opened","harness":"impl","run":"impl#p","${name}":{"x":1}}}]}`;
        const r = await post(f.socketPath, journal, "application/json", Buffer.from(body), {
          authorization: `Bearer ${producer}`,
        });
        const { results } = JSON.parse(r.body.toString("utf8")) as {
          results: { rejected?: { reason: string } }[];
        };
        expect(results[0]?.rejected?.reason, name).toBe(`${name} is not a run_event field`);
      }
      const client = journalClient({ socketPath: f.socketPath }, producer);
      const event = JSON.parse('{"type":"opened","harness":"impl","run":"impl#p","__proto__":{"x":1}}');
      const res = await client.append({ events: [{ kind: "run_event", event }] }, opts);
      expect(res.results[0]?.result.value).toEqual(
        expect.objectContaining({ reason: "__proto__ is not a run_event field" }),
      );
      expect(journalCount(f, { kind: "run_event" })).toBe(0);
    });

    it("reports an empty or missing type as required, not as a permission problem", async () => {
      const client = journalClient({ socketPath: f.socketPath }, producer);
      const res = await client.append(
        {
          events: [
            { kind: "run_event", event: { type: "", harness: "impl", run: "impl#t" } },
            { kind: "run_event", event: { harness: "impl", run: "impl#t" } },
          ],
        },
        opts,
      );
      expect(
        res.results.map((r) => (r.result.case === "rejected" ? r.result.value.reason : r.result.case)),
      ).toEqual(["type is required", "type is required"]);
    });
  });

  describe("absurd ranges, page sizes and names", () => {
    it("refuses a page size of 2^32-1 on every list with INVALID_ARGUMENT naming the limit", async () => {
      const limit = 2 ** 32 - 1;
      for (const call of [
        () => reader().listFires({ limit }, opts),
        () => reader().listHolds({ limit, includeReleased: true }, opts),
        () => reader().listAnnotations({ limit }, opts),
        () => reader().listProposals({ limit }, opts),
      ]) {
        const e = await failure(call());
        expect(e.code).toBe(Code.InvalidArgument);
        expect(e.rawMessage).toContain(`limit ${limit}`);
        expect(e.findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.INVALID_ARGUMENT);
      }
    });

    it("refuses a negative since_ms, and one past any time the journal can hold, with INVALID_ARGUMENT; a future one finds nothing", async () => {
      for (const sinceMs of [-1n, -(2n ** 63n), 2n ** 63n - 1n]) {
        const e = await failure(reader().listFires({ sinceMs }, opts));
        expect(e.code, String(sinceMs)).toBe(Code.InvalidArgument);
      }
      const future = BigInt(Date.UTC(9999, 0, 1));
      expect((await reader().listFires({ sinceMs: future }, opts)).fires).toEqual([]);
    });

    it("refuses names longer than any the daemon holds with INVALID_ARGUMENT, echoing only their start", async () => {
      const huge = "h".repeat(MiB);
      const calls: [string, () => Promise<unknown>][] = [
        ["GetRule", () => reader().getRule({ name: huge }, opts)],
        ["CheckAdmission", () => reader().checkAdmission({ harness: huge }, opts)],
        ["ExplainFire", () => reader().explainFire({ fireId: huge }, opts)],
        ["ListFires rule", () => reader().listFires({ rule: huge }, opts)],
        ["ListFires harness", () => reader().listFires({ harness: huge }, opts)],
        ["ListHolds", () => reader().listHolds({ harness: huge }, opts)],
        ["ListAnnotations", () => reader().listAnnotations({ node: huge }, opts)],
        ["ListProposals after", () => reader().listProposals({ after: huge }, opts)],
        ["ListProposals policy_repo", () => reader().listProposals({ policyRepo: huge }, opts)],
        ["ListProposals state", () => reader().listProposals({ state: huge }, opts)],
        ["RecordProposal id", () => controller().recordProposal({ id: huge, policyRepo: "ops" }, opts)],
        [
          "RecordProposal policy_repo",
          () => controller().recordProposal({ id: "p-1", policyRepo: huge, state: "waiting" }, opts),
        ],
      ];
      for (const [what, call] of calls) {
        const e = await failure(call());
        expect(e.code, what).toBe(Code.InvalidArgument);
        expect(e.rawMessage.length).toBeLessThan(1_000);
        expect(e.findDetails(ErrorDetailSchema)[0]?.subject.length ?? 0).toBeLessThan(1_000);
      }
    });

    it("refuses CheckAdmission of an empty harness: an unset variable is not admitted", async () => {
      const e = await failure(reader().checkAdmission({ harness: "" }, opts));
      expect(e.code).toBe(Code.InvalidArgument);
      expect(e.rawMessage).toBe("harness is required");
    });

    it("refuses out-of-range numbers in JSON with INVALID_ARGUMENT", async () => {
      for (const body of [
        '{"limit":-1}',
        '{"limit":4294967296}',
        '{"limit":1.5}',
        '{"sinceMs":"9223372036854775808"}',
      ]) {
        const r = await post(f.socketPath, `${rule}ListFires`, "application/json", Buffer.from(body));
        expect(unaryCode(r), body).toBe("invalid_argument");
      }
    });
  });

  describe("malformed bodies", () => {
    it("refuses malformed JSON with INVALID_ARGUMENT, and bytes that are no protobuf", async () => {
      for (const body of ["{", "[]", '"x"', "null", '{"limit":"abc"}', '{"rule":{}}', "\u0000\u0001"]) {
        const r = await post(f.socketPath, `${rule}ListFires`, "application/json", Buffer.from(body));
        expect(unaryCode(r), JSON.stringify(body)).toBe("invalid_argument");
      }
      const truncated = await post(
        f.socketPath,
        `${rule}GetRule`,
        "application/proto",
        Buffer.from([0x0a, 0x40, 0x61]),
      );
      expect(binaryRefusal(truncated)).toBe(BINARY_REFUSED);
      const badStruct = await post(
        f.socketPath,
        journal,
        "application/json",
        Buffer.from('{"events":[{"kind":"run_event","event":"not an object"}]}'),
        { authorization: `Bearer ${producer}` },
      );
      expect(unaryCode(badStruct)).toBe("invalid_argument");
    });

    it("ends a stream whose request is malformed JSON with INVALID_ARGUMENT, and one without a request with UNIMPLEMENTED", async () => {
      const json = await post(
        f.socketPath,
        `${rule}WatchEvents`,
        "application/connect+json",
        envelope(Buffer.from("{")),
      );
      expect(streamCode(json)).toBe("invalid_argument");
      // No request message for a server stream: the Connect protocol's code for a cardinality violation.
      const none = await post(
        f.socketPath,
        `${rule}WatchEvents`,
        "application/connect+proto",
        Buffer.alloc(0),
      );
      expect(streamCode(none)).toBe("unimplemented");
    });

    it("refuses an event nested deeper than the parsers go, in either codec, without harm to the daemon", async () => {
      const depth = 200_000;
      const json = `{"events":[{"kind":"run_event","event":{"type":"opened","deep":${"[".repeat(depth)}${"]".repeat(depth)}}}]}`;
      const r = await post(f.socketPath, journal, "application/json", Buffer.from(json), {
        authorization: `Bearer ${producer}`,
      });
      expect(unaryCode(r)).toBe("invalid_argument");
      const inner = nestedLists(100_000);
      const event = lengthDelimited(
        1,
        Buffer.concat([lengthDelimited(1, Buffer.from("deep")), lengthDelimited(2, inner)]),
      );
      const wire = Buffer.concat([lengthDelimited(1, Buffer.from("run_event")), lengthDelimited(2, event)]);
      const rb = await post(f.socketPath, journal, "application/proto", lengthDelimited(1, wire), {
        authorization: `Bearer ${producer}`,
      });
      expect(binaryRefusal(rb)).toBe(BINARY_REFUSED);
    });
  });

  it("leaves the daemon unaffected: a read answers and an Append is admitted", async () => {
    expect((await reader().getStatus({}, opts)).version).not.toBe("");
    const { results } = await journalClient({ socketPath: f.socketPath }, producer).append(
      { events: [opened("impl#after")] },
      opts,
    );
    expect(results.map((r) => r.result.case)).toEqual(["admitted"]);
    expect(f.running).toBe(true);
  });
});
