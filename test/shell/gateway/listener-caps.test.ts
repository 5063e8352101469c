/**
 * Issue 26's bounds on the daemon's listeners and journal reads, against a real daemon: journal scans run
 * in a worker over a connection of their own (finding 5); the hook endpoint answers 401 from the headers
 * before reading a body, and every listener closes the connection past its cap and counts it (finding 7);
 * the gateway's session cap, its answers to invalid JSON and batches, a token file that is a FIFO, and
 * the count a failed append already admitted (finding 12). The heavy variants (a million rows, caps
 * filled many times over) are in test/soak.
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_HOOK_CONNECTIONS } from "../../../src/shell/agents/ingest/hook-http-server.js";
import { MAX_GATEWAY_SESSIONS } from "../../../src/shell/gateway/gateway-server.js";
import { encodePreamble, mcpSocketPath } from "../../../src/shell/gateway/protocol.js";
import { MAX_APPEND_BATCH } from "../../../src/shell/rpc/limits.js";
import { MAX_SOCKET_CONNECTIONS } from "../../../src/shell/rpc/server.js";
import { CLI, jsonl, TestFleet } from "../daemon-harness.js";
import { gatewayToken, mcpSession } from "./mcp-session.js";

let fleet: TestFleet;
let hooksUrl: URL;
let metricsUrl: string;
let token: string;

beforeAll(async () => {
  fleet = new TestFleet({ config: '[agents]\nlisten = "127.0.0.1:0"\n[memory]\nrule_miners = ["miner"]' });
  const started = await fleet.start();
  hooksUrl = new URL(/hooks (http:\S+)/.exec(started)?.[1] as string);
  metricsUrl = /metrics (http:[^\s,]+)/.exec(started)?.[1] as string;
  token = await gatewayToken(fleet, "miner", "miner#1");
}, 30_000);

afterAll(() => fleet.dispose());

/** A counter's value in the daemon's metrics, 0 when it has no sample yet. */
async function metric(name: string, labels = ""): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}

/** How many of the daemon's open files are the store's database file (one per SQLite connection). */
/** The descriptors process `pid` holds on the store, each with whether it was opened read-only. */
function storeConnections(pid = fleet.pid as number): { readonly readOnly: boolean }[] {
  const store = fs.realpathSync(fleet.storePath);
  const dir = `/proc/${pid}/fd`;
  return fs.readdirSync(dir).flatMap((fd) => {
    try {
      if (fs.readlinkSync(path.join(dir, fd)) !== store) return [];
      const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))?.[1];
      return [{ readOnly: flags !== undefined && (Number.parseInt(flags, 8) & 3) === 0 }];
    } catch {
      return [];
    }
  });
}

/** The daemon's child processes (its journal query workers among them). */
const children = (): number[] =>
  fs
    .readFileSync(`/proc/${fleet.pid}/task/${fleet.pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter((p) => p !== "")
    .map(Number);

/** Opens `n` connections and waits until each is established. */
async function hold(connect: () => net.Socket, n: number): Promise<net.Socket[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = connect();
          s.once("connect", () => resolve(s));
          s.once("error", reject);
        }),
    ),
  );
}

/** Whether the listener closes a connection it accepted, unanswered, within 5 s. */
function closedUnanswered(s: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    let data = false;
    s.on("data", () => {
      data = true;
    });
    s.on("error", () => undefined);
    const timer = setTimeout(() => resolve(false), 5_000);
    s.once("close", () => {
      clearTimeout(timer);
      resolve(!data);
    });
  });
}

/** A raw gateway connection: writes lines, reads the answers one line at a time. */
function gatewayLines(presented: string): {
  write(line: string): void;
  next(): Promise<Record<string, unknown>>;
  close(): void;
} {
  const socket = net.connect(mcpSocketPath(fleet.socketPath));
  socket.on("error", () => undefined);
  socket.write(encodePreamble(presented));
  let buffered = "";
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  socket.on("data", (d: Buffer) => {
    buffered += d.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
    wake?.();
  });
  return {
    write: (line) => socket.write(`${line}\n`),
    next: async () => {
      // A guard against a hang, not a timing: 256 sessions starting at once on a loaded machine take a while.
      const deadline = Date.now() + 30_000;
      while (lines.length === 0) {
        if (Date.now() > deadline || socket.destroyed) throw new Error("the gateway gave no answer");
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return JSON.parse(lines.shift() as string) as Record<string, unknown>;
    },
    close: () => socket.destroy(),
  };
}

const initialize = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "caps-test", version: "1" },
    },
  });

describe("issue 26: journal reads, listener and session caps", () => {
  it("finding 5: count_journal and query_journal scan in a worker over a read-only connection of its own, not on the daemon's", async () => {
    const r = await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
      jsonl(
        Array.from({ length: 50 }, (_, i) => ({
          kind: "run_event",
          type: "tool",
          harness: "h",
          run: `h#${i}`,
          tool: "Bash",
        })),
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    const before = storeConnections().length;
    const s = await mcpSession(fleet, token);
    try {
      const counted = await s.data("count_journal", { selector: { tool: "Bash" }, within: "168h" });
      expect(counted).toMatchObject({ number: 50 });
      const queried = await s.data("query_journal", { type: "tool", limit: 10 });
      expect((queried.rows as unknown[]).length).toBe(10);
    } finally {
      await s.close();
    }
    // The daemon's own connection does not scan: a worker process opened one, read-only, and keeps it.
    expect(storeConnections().length).toBe(before);
    const workers = children().filter((pid) => storeConnections(pid).length > 0);
    expect(workers).toHaveLength(1);
    expect(storeConnections(workers[0])).toEqual([{ readOnly: true }]);
  });

  it("finding 7: the hook endpoint answers 401 from the headers, before the body is sent, and counts it", async () => {
    const before = await metric("harness_hook_unauthenticated_total");
    const ask = (options: http.RequestOptions) =>
      new Promise<http.IncomingMessage>((resolve, reject) => {
        // Only the headers are sent, declaring a 1 MiB body that never comes: the answer cannot wait for it.
        const req = http.request({
          ...options,
          method: "POST",
          headers: { "content-length": String(1024 * 1024), authorization: `Bearer ${"w".repeat(40)}` },
        });
        req.on("response", (res) => {
          resolve(res);
          req.destroy();
        });
        req.on("error", reject);
        req.flushHeaders();
      });
    const overHttp = await ask({
      host: hooksUrl.hostname,
      port: hooksUrl.port,
      path: "/hooks/claude-code?harness=impl",
    });
    expect(overHttp.statusCode).toBe(401);
    expect(overHttp.headers["x-harness-note"]).toBe(
      "the Authorization bearer token is not one the daemon knows for the observer producer",
    );
    const overSocket = await ask({ socketPath: fleet.socketPath, path: "/hooks/claude-code?harness=impl" });
    expect(overSocket.statusCode).toBe(401);
    expect(await metric("harness_hook_unauthenticated_total")).toBe(before + 2);
  });

  it(`finding 7: the http hook listener closes connection ${MAX_HOOK_CONNECTIONS + 1} unanswered and counts it`, async () => {
    const connect = () => net.connect(Number(hooksUrl.port), hooksUrl.hostname);
    const held = await hold(connect, MAX_HOOK_CONNECTIONS);
    try {
      const [extra] = await hold(connect, 1);
      expect(await closedUnanswered(extra as net.Socket)).toBe(true);
      expect(held.every((s) => !s.destroyed)).toBe(true);
    } finally {
      for (const s of held) s.destroy();
    }
    expect(await metric("harness_connections_refused_total", '{listener="hooks_http"}')).toBe(1);
  });

  it(`finding 7: the RPC socket (and the hook endpoint on it) closes connection ${MAX_SOCKET_CONNECTIONS + 1} and counts it`, async () => {
    const connect = () => net.connect(fleet.socketPath);
    const held = await hold(connect, MAX_SOCKET_CONNECTIONS);
    try {
      const [extra] = await hold(connect, 1);
      expect(await closedUnanswered(extra as net.Socket)).toBe(true);
    } finally {
      for (const s of held) s.destroy();
    }
    expect(await metric("harness_connections_refused_total", '{listener="socket"}')).toBe(1);
  });

  it(`finding 12: the gateway refuses session ${MAX_GATEWAY_SESSIONS + 1} at its initialize, saying why, and counts it`, async () => {
    const open = Array.from({ length: MAX_GATEWAY_SESSIONS }, () => gatewayLines(token));
    try {
      await Promise.all(
        open.map(async (g, i) => {
          g.write(initialize(i));
          expect(await g.next()).toHaveProperty("result");
        }),
      );
      const extra = gatewayLines(token);
      extra.write(initialize(1));
      const refused = await extra.next();
      expect(refused).toMatchObject({ id: 1, error: { code: -32002 } });
      expect(JSON.stringify(refused)).toContain(`${MAX_GATEWAY_SESSIONS} sessions are open`);
      extra.close();
      expect(await metric("harness_gateway_sessions_refused_total")).toBe(1);
    } finally {
      for (const g of open) g.close();
    }
    // The daemon frees a session when it sees its connection close: the next test needs one.
    for (let tries = 0; ; tries++) {
      const g = gatewayLines(token);
      g.write(initialize(0));
      // Refused while the old sessions close: by its cap (-32002) or, past the connection cap, closed.
      const answer = await g.next().catch(() => ({}));
      g.close();
      if ("result" in answer) break;
      if (tries === 100) throw new Error("the gateway never freed its sessions");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);

  it("finding 12: the gateway answers a line that is not JSON with -32700 and a batch with -32600, and the session goes on", async () => {
    const g = gatewayLines(token);
    try {
      g.write("{not json");
      expect(await g.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      g.write(`[${initialize(1)}]`);
      expect(await g.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      g.write(JSON.stringify({ id: 7, method: 42 }));
      expect(await g.next()).toMatchObject({ id: 7, error: { code: -32600 } });
      g.write(initialize(2));
      expect(await g.next()).toMatchObject({ id: 2, result: { serverInfo: { name: "harness-rules" } } });
    } finally {
      g.close();
    }
  });

  it("finding 12: journal append refuses a token file that is a FIFO with a clear error instead of hanging", async () => {
    const fifo = path.join(fleet.root, "token.fifo");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    const r = await fleet.cli(["journal", "append", "--token-file", fifo], "");
    expect(r.stderr).toMatch(/token\.fifo.*not a regular file/);
    expect(r.code).not.toBe(0);
  });

  it("finding 12: when the daemon goes away mid-append, append says how many rows it had admitted", async () => {
    const observer = fleet.tokens.get("observer") as string;
    const child = spawn(process.execPath, [CLI, "journal", "append", "--json", "--token-file", observer], {
      env: fleet.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const rows = (n: number, from: number) =>
      `${jsonl(Array.from({ length: n }, (_, i) => ({ kind: "run_event", type: "tool", harness: "gone", run: `gone#${from + i}` })))}\n`;
    // One full batch goes out and its answer comes back (--json prints a line per admitted row); then
    // the daemon dies and stays away.
    child.stdin.write(rows(MAX_APPEND_BATCH, 0));
    const answered = () => stdout.split("\n").filter((l) => l.includes('"admitted"')).length;
    await fleet.until(() => answered() === MAX_APPEND_BATCH, "the first batch's answer", 30_000);
    await fleet.kill();
    child.stdin.end(rows(10, MAX_APPEND_BATCH));
    expect(await exited).not.toBe(0);
    expect(stderr).toContain(
      `no daemon answers on ${fleet.socketPath}; ${MAX_APPEND_BATCH} admitted, 0 not before that`,
    );
    expect(stderr).toContain(`from line ${MAX_APPEND_BATCH + 1} on, nothing is known to be admitted`);
  }, 60_000);
});
