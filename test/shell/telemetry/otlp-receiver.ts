/**
 * A real OTLP/HTTP logs receiver for tests: an http server on loopback decoding each
 * ExportLogsServiceRequest, http/json as JSON and http/protobuf with a field walk over the published
 * proto's numbers (opentelemetry/proto/logs/v1/logs.proto), into flat records.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

export interface ReceivedRecord {
  readonly eventName: string;
  readonly severityText: string;
  readonly body: string;
  readonly attributes: Record<string, string | number>;
  readonly resource: Record<string, string | number>;
  /** The headers of the request that carried it (set by the receiver). */
  readonly headers?: http.IncomingHttpHeaders;
}

type Json = Record<string, unknown>;
const anyValue = (v: Json | undefined): string | number =>
  v === undefined ? "" : v.stringValue !== undefined ? String(v.stringValue) : Number(v.intValue);
const kvs = (list: unknown): Record<string, string | number> =>
  Object.fromEntries(((list as Json[]) ?? []).map((kv) => [kv.key as string, anyValue(kv.value as Json)]));

function fromJson(text: string): ReceivedRecord[] {
  const out: ReceivedRecord[] = [];
  for (const rl of (JSON.parse(text) as Json).resourceLogs as Json[])
    for (const sl of rl.scopeLogs as Json[])
      for (const r of sl.logRecords as Json[])
        out.push({
          eventName: String(r.eventName ?? ""),
          severityText: String(r.severityText ?? ""),
          body: String(anyValue(r.body as Json)),
          attributes: kvs(r.attributes),
          resource: kvs((rl.resource as Json)?.attributes),
        });
  return out;
}

/** Each length-delimited field of a message, by number; varints as numbers. */
function fields(bytes: Uint8Array): [number, Uint8Array | number][] {
  const r = new BinaryReader(bytes);
  const out: [number, Uint8Array | number][] = [];
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (type === WireType.LengthDelimited) out.push([no, r.bytes()]);
    else if (type === WireType.Varint) out.push([no, Number(r.int64())]);
    else r.skip(type);
  }
  return out;
}
const text = (b: Uint8Array | number) => new TextDecoder().decode(b as Uint8Array);
const protoAny = (b: Uint8Array): string | number => {
  for (const [no, v] of fields(b)) {
    if (no === 1) return text(v); // string_value
    if (no === 3) return Number(v); // int_value
  }
  return "";
};
const protoKvs = (list: (Uint8Array | number)[]) =>
  Object.fromEntries(
    list.map((kv) => {
      const f = fields(kv as Uint8Array);
      const key = text(f.find(([n]) => n === 1)?.[1] ?? new Uint8Array());
      const value = f.find(([n]) => n === 2)?.[1];
      return [key, value === undefined ? "" : protoAny(value as Uint8Array)];
    }),
  );
const of = (f: [number, Uint8Array | number][], no: number) => f.filter(([n]) => n === no).map(([, v]) => v);

function fromProto(bytes: Uint8Array): ReceivedRecord[] {
  const out: ReceivedRecord[] = [];
  for (const rl of of(fields(bytes), 1)) {
    const rlf = fields(rl as Uint8Array);
    const resource = of(rlf, 1)[0];
    const resourceAttrs = resource === undefined ? {} : protoKvs(of(fields(resource as Uint8Array), 1));
    for (const sl of of(rlf, 2))
      for (const rec of of(fields(sl as Uint8Array), 2)) {
        const f = fields(rec as Uint8Array);
        const body = of(f, 5)[0];
        out.push({
          eventName: text(of(f, 12)[0] ?? new Uint8Array()),
          severityText: text(of(f, 3)[0] ?? new Uint8Array()),
          body: body === undefined ? "" : String(protoAny(body as Uint8Array)),
          attributes: protoKvs(of(f, 6)),
          resource: resourceAttrs,
        });
      }
  }
  return out;
}

export class OtlpReceiver {
  readonly records: ReceivedRecord[] = [];
  readonly contentTypes = new Set<string>();
  private server: http.Server | undefined;

  async start(port = 0): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const type = req.headers["content-type"] ?? "";
        this.contentTypes.add(type);
        const decoded = type.includes("json") ? fromJson(body.toString("utf8")) : fromProto(body);
        this.records.push(...decoded.map((r) => ({ ...r, headers: req.headers })));
        res.writeHead(200, { "content-type": type });
        res.end(type.includes("json") ? "{}" : "");
      });
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
