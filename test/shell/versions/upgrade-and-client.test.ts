/**
 * Versions that meet at the two ends decision 0018 adds besides the daemon's interceptor: the TCP
 * listener's upgrade to the MCP gateway's stream (404 for another path or protocol, 412 for versions
 * apart, 101 and the socket handed over otherwise), and an RPC client that refuses a daemon whose answered
 * version does not meet its own.
 */
import * as http from "node:http";
import * as net from "node:net";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { CredentialHolder } from "../../../src/shell/rpc/credentials.js";
import { type RpcServer, startRpcServer } from "../../../src/shell/rpc/server.js";
import { packageVersion } from "../../../src/shell/support/version.js";
import { recordingAdmit, type TempDir, tempDir } from "../rpc/helpers.js";

let dir: TempDir;
const servers: RpcServer[] = [];
beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dir.remove();
});

/** One raw exchange on the TCP listener: what came back before the server closed or `until` matched. */
function exchange(address: string, request: string, until: RegExp): Promise<string> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(":")),
    Number(address.slice(address.lastIndexOf(":") + 1)),
  ];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(request));
    let got = "";
    socket.on("data", (d: Buffer) => {
      got += d.toString("latin1");
      if (until.test(got)) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on("end", () => resolve(got));
    socket.on("error", reject);
  });
}

const upgrade = (path: string, protocol: string, version?: string) =>
  `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${protocol}\r\n${
    version === undefined ? "" : `x-harness-version: ${version}\r\n`
  }\r\n`;

describe("the gateway's upgrade on the TCP listener", () => {
  it("hands over a meeting version's connection; refuses another path, another protocol and a far version", async () => {
    const adopted: net.Socket[] = [];
    const server = await startRpcServer({
      socketPath: join(dir.path, "run", "harness.sock"),
      tcpListen: "127.0.0.1:0",
      credentials: new CredentialHolder({ producers: new Map() }),
      admit: recordingAdmit().admit,
      version: "1.4.0",
      upgrade: {
        protocol: "harness-mcp",
        path: "/harness.v1.Gateway/Connect",
        accept: (socket) => {
          adopted.push(socket);
          socket.end("adopted\n");
        },
      },
    });
    servers.push(server);
    const address = server.tcpAddress as string;

    const ok = await exchange(
      address,
      upgrade("/harness.v1.Gateway/Connect", "harness-mcp", "1.5.2"),
      /adopted\n/,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(ok).toContain("x-harness-version: 1.4.0\r\n");
    expect(adopted).toHaveLength(1);

    const far = await exchange(
      address,
      upgrade("/harness.v1.Gateway/Connect", "harness-mcp", "1.6.0"),
      /\n$/,
    );
    expect(far).toMatch(/^HTTP\/1\.1 412 Precondition Failed\r\n/);
    expect(far).toContain("versions do not meet: this client is harness 1.6.0, the daemon is 1.4.0");

    for (const [path, protocol] of [
      ["/elsewhere", "harness-mcp"],
      ["/harness.v1.Gateway/Connect", "websocket"],
    ] as const) {
      const refused = await exchange(address, upgrade(path, protocol, "1.4.0"), /\n$/);
      expect(refused).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    }
    expect(adopted).toHaveLength(1);
  });
});

describe("an RPC client's own check", () => {
  it("refuses a daemon whose answered version is too far from its own, naming both", async () => {
    const socketPath = join(dir.path, "other.sock");
    const other = http.createServer((req, res) => {
      req.resume();
      // An empty protobuf body is a valid GetStatusResponse: only the version is wrong.
      res.writeHead(200, { "content-type": "application/proto", "x-harness-version": "99.0.0" }).end();
    });
    await new Promise<void>((resolve) => other.listen(socketPath, resolve));
    try {
      const e = await ruleClient({ socketPath })
        .getStatus({})
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConnectError);
      expect((e as ConnectError).code).toBe(Code.FailedPrecondition);
      expect((e as ConnectError).rawMessage).toContain(
        `versions do not meet: this client is harness ${packageVersion()}, the daemon is "99.0.0"`,
      );
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
