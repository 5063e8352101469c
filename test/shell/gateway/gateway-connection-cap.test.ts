/**
 * The gateway's connection cap holds across its two doors (decision 0018): connections the TLS
 * listener's upgrade hands over (`adopt`) and connections on its own socket count against one total, so
 * a remote `harness mcp` crowd and local agents together never hold more than the cap.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { expect, it } from "vitest";
import { startGateway } from "../../../src/shell/gateway/gateway-server.js";
import type { GatewayDeps } from "../../../src/shell/gateway/session-context.js";
import { createLog } from "../../../src/shell/support/log.js";

/** No connection here presents a token, so no session begins: what a session would call is never reached. */
const deps: GatewayDeps = {
  identify: () => undefined,
  ruleMiners: () => [],
  proposals: { propose: () => Promise.reject(new Error("no session here proposes")) },
  rules: {} as GatewayDeps["rules"],
  journal: {} as GatewayDeps["journal"],
  clock: Date.now,
  log: createLog({ level: "silent" }),
};

const connected = (socket: net.Socket) =>
  new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });

const closed = (socket: net.Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

it("connections adopted from the upgrade and on the socket are held to one total", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-gateway-cap-"));
  fs.chmodSync(dir, 0o700);
  const refused: string[] = [];
  const gateway = await startGateway(path.join(dir, "mcp.sock"), deps, {
    maxSessions: 1,
    refused: (what) => refused.push(what),
  });
  // Stands in for the TLS listener: every connection it accepts is handed to the gateway.
  const upgrades = net.createServer((s) => gateway.adopt(s));
  await new Promise<void>((resolve) => upgrades.listen(0, "127.0.0.1", resolve));
  const clients: net.Socket[] = [];
  try {
    // The total with one session allowed: the session and 32 connections still presenting a token.
    const total = 1 + 32;
    const { port } = upgrades.address() as net.AddressInfo;
    for (let i = 0; i < total; i++) {
      const c = net.connect(port, "127.0.0.1");
      clients.push(c);
      await connected(c);
    }
    expect(refused).toEqual([]);
    const local: net.Socket[] = [];
    for (let i = 0; i < 5; i++) {
      const c = net.connect(gateway.socketPath);
      clients.push(c);
      local.push(c);
      await connected(c);
    }
    // Each one past the total is closed at once; unrefused, it would wait out the 10 s preamble.
    expect(await Promise.all(local.map((c) => closed(c, 8000)))).toEqual([true, true, true, true, true]);
    expect(refused).toEqual(["connection", "connection", "connection", "connection", "connection"]);
  } finally {
    for (const c of clients) c.destroy();
    upgrades.close();
    await gateway.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
