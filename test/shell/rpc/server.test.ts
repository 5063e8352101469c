import { chmodSync, mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { join } from "node:path";
import { create, createFileRegistry, type JsonObject } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_empty } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalClient, type RpcTarget } from "../../../src/shell/rpc/client.js";
import { CredentialHolder, loadCredentials } from "../../../src/shell/rpc/credentials.js";
import { type RpcServer, RpcServerError, startRpcServer } from "../../../src/shell/rpc/server.js";
import {
  newToken,
  type RecordingAdmit,
  recordingAdmit,
  type TempDir,
  tempDir,
  writeTokenFile,
} from "./helpers.js";

const tool = (extra: JsonObject = {}): { kind: string; event: JsonObject } => ({
  kind: "run_event",
  event: {
    type: "tool",
    at: "2026-01-05T10:00:00Z",
    harness: "impl",
    run: "impl#41",
    action: "verify",
    ...extra,
  },
});

let dir: TempDir;
let tokens: { observer: string; graph: string; read: string; control: string };
let credentials: CredentialHolder;
let servers: RpcServer[];

beforeEach(async () => {
  dir = tempDir();
  servers = [];
  tokens = { observer: newToken(), graph: newToken(), read: newToken(), control: newToken() };
  credentials = new CredentialHolder(
    await loadCredentials({
      producers: new Map([
        ["observer", writeTokenFile(dir.path, "observer.token", tokens.observer)],
        ["graph", writeTokenFile(dir.path, "graph.token", tokens.graph)],
      ]),
      readTokenFile: writeTokenFile(dir.path, "read.token", tokens.read),
      controlTokenFile: writeTokenFile(dir.path, "control.token", tokens.control),
    }),
  );
});

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  dir.remove();
});

async function serve(
  admit: RecordingAdmit,
  extra: { tcpListen?: string; readMaxBytes?: number; socketPath?: string } = {},
): Promise<RpcServer> {
  const server = await startRpcServer({
    socketPath: join(dir.path, "run", "harness.sock"),
    credentials,
    admit: admit.admit,
    ...extra,
  });
  servers.push(server);
  return server;
}

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the call should have failed").toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

const append = (target: RpcTarget, token: string | undefined, events: ReturnType<typeof tool>[]) =>
  journalClient(target, token).append({ events });

describe("JournalService.Append over the socket", () => {
  it("admits a producer's batch under its credential's source, one result per event in order", async () => {
    const rec = recordingAdmit(2);
    const server = await serve(rec);
    const res = await append({ socketPath: server.socketPath }, tokens.observer, [
      tool(),
      tool({ summary: "the agent said…" }),
      tool({ is_error: true }),
      tool(),
    ]);
    expect(res.results.map((r) => r.result)).toEqual([
      { case: "admitted", value: expect.objectContaining({ seq: 1n }) },
      { case: "rejected", value: expect.objectContaining({ reason: "summary is not a run_event field" }) },
      { case: "admitted", value: expect.objectContaining({ seq: 2n }) },
      { case: "dropped", value: expect.anything() },
    ]);
    expect(rec.calls).toHaveLength(1);
    expect(rec.calls[0]?.source).toBe("observer");
    expect(rec.calls[0]?.events[0]).toEqual({ kind: "run_event", ...tool().event });
  });

  it("refuses a kind the source may not produce itself: the row never reaches admit", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec);
    const closed = {
      kind: "run_event",
      event: { type: "closed", at: "2026-01-05T10:00:00Z", outcome: "failed" },
    };
    const edge = {
      kind: "graph_event",
      event: { type: "edge_added", at: "2026-01-05T10:00:00Z", edge: "edited" },
    };
    const res = await append({ socketPath: server.socketPath }, tokens.graph, [closed, edge]);
    expect(res.results.map((r) => r.result)).toEqual([
      {
        case: "rejected",
        value: expect.objectContaining({
          reason: "source graph may not write run_event rows (it writes graph_event)",
        }),
      },
      { case: "admitted", value: expect.objectContaining({ seq: 1n }) },
    ]);
    expect(rec.calls.map((c) => c.events)).toEqual([[{ kind: "graph_event", ...edge.event }]]);

    const only = await append({ socketPath: server.socketPath }, tokens.graph, [closed]);
    expect(only.results[0]?.result.case).toBe("rejected");
    expect(rec.calls).toHaveLength(1);
  });

  it("refuses tick rows, unknown kinds and an event that carries its own kind", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec);
    const res = await append({ socketPath: server.socketPath }, tokens.observer, [
      { kind: "tick", event: { type: "tick" } },
      { kind: "run_events", event: { type: "tool" } },
      { kind: "run_event", event: { ...tool().event, kind: "graph_event" } },
      { kind: "run_event", event: { at: "2026-01-05T10:00:00Z" } },
    ]);
    expect(
      res.results.map((r) => (r.result.case === "rejected" ? r.result.value.reason : r.result.case)),
    ).toEqual([
      "source observer may not write tick rows (it writes run_event, attempt_event)",
      'kind must be one of run_event, attempt_event, graph_event, fact_event (got "run_events")',
      "event must not carry kind: the row's kind is WireEvent.kind, and a fact's own kind is fact_kind",
      "type is required",
    ]);
    expect(rec.calls).toHaveLength(0);
  });

  it("denies a missing, wrong, read or control credential with PERMISSION_DENIED before admit", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec);
    const target = { socketPath: server.socketPath };
    const cases: [string | undefined, string][] = [
      [undefined, "which a reader does not hold"],
      [newToken(), "unknown bearer token"],
      [tokens.read, "which a reader does not hold"],
      [tokens.control, "which a controller does not hold"],
    ];
    for (const [token, reason] of cases) {
      const err = await failure(append(target, token, [tool()]));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).toContain(reason);
    }
    expect(rec.calls).toHaveLength(0);
  });

  it("refuses a batch of 1,001 events as a whole and admits one of 1,000", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec);
    const target = { socketPath: server.socketPath };
    const err = await failure(
      append(
        target,
        tokens.observer,
        Array.from({ length: 1001 }, () => tool()),
      ),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("a batch holds at most 1000 events (got 1001); nothing was admitted");
    expect(rec.calls).toHaveLength(0);
    const res = await append(
      target,
      tokens.observer,
      Array.from({ length: 1000 }, () => tool()),
    );
    expect(res.results.every((r) => r.result.case === "admitted")).toBe(true);
  });

  it("refuses a request over readMaxBytes with RESOURCE_EXHAUSTED, nothing admitted", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec, { readMaxBytes: 16 * 1024 });
    const big = Array.from({ length: 40 }, () => tool({ run: "r".repeat(1000) }));
    const err = await failure(append({ socketPath: server.socketPath }, tokens.observer, big));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(rec.calls).toHaveLength(0);
  });
});

describe("the socket", () => {
  it("is 0600 in a directory created 0700, and is removed on close", async () => {
    const server = await serve(recordingAdmit());
    expect(statSync(server.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, "run")).mode & 0o777).toBe(0o700);
    await server.close();
    expect(() => statSync(server.socketPath)).toThrow(/ENOENT/);
  });

  it("refuses a socket directory others may write to", async () => {
    const open = join(dir.path, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(
      startRpcServer({ socketPath: join(open, "harness.sock"), credentials, admit: recordingAdmit().admit }),
    ).rejects.toThrow(
      `socket directory ${open} is writable by group or others (mode 777); it should be 0700`,
    );
  });

  it("replaces a stale socket but refuses to start beside a live server or over another file", async () => {
    const socketPath = join(dir.path, "harness.sock");
    // A socket file nothing listens on, as a crashed daemon leaves it.
    const ghost = net.createServer().listen(join(dir.path, "ghost.sock"));
    await new Promise((r) => ghost.once("listening", r));
    renameSync(join(dir.path, "ghost.sock"), socketPath);
    await new Promise((r) => ghost.close(r));
    expect(statSync(socketPath).isSocket()).toBe(true);

    const first = await serve(recordingAdmit(), { socketPath });
    const second = await startRpcServer({ socketPath, credentials, admit: recordingAdmit().admit }).catch(
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(RpcServerError);
    expect((second as Error).message).toBe(
      `another server is already listening on ${socketPath}; is a daemon running?`,
    );
    const res = await append({ socketPath: first.socketPath }, tokens.observer, [tool()]);
    expect(res.results[0]?.result.case).toBe("admitted");

    const plain = join(dir.path, "plain");
    writeFileSync(plain, "");
    await expect(
      startRpcServer({ socketPath: plain, credentials, admit: recordingAdmit().admit }),
    ).rejects.toThrow(`${plain} exists and is not a socket; refusing to replace it`);
  });
});

describe("closing", () => {
  it("lets a call in flight finish, then returns without waiting out keep-alive", async () => {
    let entered!: () => void;
    const admitting = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const server = await serve({
      calls: [],
      admit: async (_source, events) => {
        entered();
        await released;
        return events.map(() => ({ kind: "admitted", seq: 7 }));
      },
    });
    const client = journalClient({ socketPath: server.socketPath }, tokens.observer);
    const call = client.append({ events: [tool()] });
    await admitting;
    const start = Date.now();
    const closed = server.close();
    release();
    expect((await call).results[0]?.result).toEqual({
      case: "admitted",
      value: expect.objectContaining({ seq: 7n }),
    });
    await closed;
    expect(Date.now() - start).toBeLessThan(1000);
    expect(() => statSync(server.socketPath)).toThrow(/ENOENT/);
  });
});

describe("the TCP listener", () => {
  it("requires a bearer token of at least 32 bytes; a producer token appends over it", async () => {
    const rec = recordingAdmit();
    const server = await serve(rec, { tcpListen: "127.0.0.1:0" });
    expect(server.tcpAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    const target = { baseUrl: `http://${server.tcpAddress}` };
    const cases: [string | undefined, string][] = [
      [undefined, "a TCP caller must present a bearer token"],
      ["x".repeat(31), "a TCP caller's bearer token must be at least 32 bytes"],
      [newToken(), "unknown bearer token"],
      [tokens.read, "which a reader does not hold"],
    ];
    for (const [token, reason] of cases) {
      const err = await failure(append(target, token, [tool()]));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).toContain(reason);
    }
    expect(rec.calls).toHaveLength(0);
    const res = await append(target, tokens.observer, [tool()]);
    expect(res.results[0]?.result.case).toBe("admitted");
    expect(rec.calls[0]?.source).toBe("observer");
  });
});

describe("starting the server", () => {
  it("refuses to serve a method the tier table lacks", async () => {
    const file = create(FileDescriptorProtoSchema, {
      name: "fake/v1/fake.proto",
      package: "fake.v1",
      syntax: "proto3",
      dependency: ["google/protobuf/empty.proto"],
      service: [
        {
          name: "FakeService",
          method: [
            { name: "Peek", inputType: ".google.protobuf.Empty", outputType: ".google.protobuf.Empty" },
          ],
        },
      ],
    });
    const registry = createFileRegistry(file, (name) =>
      name === "google/protobuf/empty.proto" ? file_google_protobuf_empty : undefined,
    );
    const fake = registry.getService("fake.v1.FakeService");
    if (fake === undefined) throw new Error("the fake service did not build");
    const socketPath = join(dir.path, "harness.sock");
    await expect(
      startRpcServer({
        socketPath,
        credentials,
        admit: recordingAdmit().admit,
        routes: (router) => router.service(fake, {}),
      }),
    ).rejects.toThrow(
      "RPC method fake.v1.FakeService/Peek is served but has no tier in src/shell/rpc/tiers.ts",
    );
    expect(() => statSync(socketPath)).toThrow(/ENOENT/);
  });
});

describe("connection caps (issue 26, finding 7)", () => {
  it("finding 7: the socket and the TCP listener close the connection past their cap and tell who refused it", async () => {
    const refused: string[] = [];
    const server = await startRpcServer({
      socketPath: join(dir.path, "run", "harness.sock"),
      tcpListen: "127.0.0.1:0",
      credentials,
      admit: recordingAdmit().admit,
      maxConnections: { socket: 2, tcp: 2 },
      refused: (listener) => refused.push(listener),
    });
    servers.push(server);
    const [host, port] = [server.tcpAddress?.split(":")[0], Number(server.tcpAddress?.split(":")[1])];
    const open = (connect: () => net.Socket) =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = connect();
        s.once("connect", () => resolve(s));
        s.once("error", reject);
      });
    const closed = (s: net.Socket) => new Promise<void>((resolve) => s.once("close", () => resolve()));
    for (const connect of [() => net.connect(server.socketPath), () => net.connect(port, host)]) {
      const held = [await open(connect), await open(connect)];
      const extra = await open(connect);
      await closed(extra);
      expect(held.every((s) => !s.destroyed)).toBe(true);
      for (const s of held) s.destroy();
    }
    expect(refused).toEqual(["socket", "tcp"]);
  });
});
