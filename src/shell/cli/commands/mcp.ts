/**
 * `harness mcp`: what an agent's MCP config launches (SPEC-0029 REQ-15). A relay and nothing more: it
 * connects to the daemon's gateway, presents the token from `HARNESS_MCP_TOKEN` as one preamble line
 * (`gateway/protocol.ts` says why there), then copies stdin to the gateway and the gateway to stdout,
 * byte for byte. Stdout carries only the protocol; what the relay has to say goes to stderr. The tools,
 * the caller's identity and every check live in the daemon.
 *
 * The gateway is the local daemon's socket, or, with `--daemon https://…` (or `[client] daemon`), the
 * remote daemon's TLS listener, upgraded to the gateway's stream (decision 0018): the upgrade says this
 * build's version, and a daemon whose version does not meet it answers why, which the relay prints.
 */
import * as net from "node:net";
import * as tls from "node:tls";
import {
  encodePreamble,
  MCP_TOKEN_ENV,
  MCP_UPGRADE,
  MCP_UPGRADE_PATH,
  mcpSocketPath,
} from "../../gateway/protocol.js";
import { readTokenFile } from "../../rpc/credentials.js";
import { clientTlsOptions } from "../../support/tls-listener.js";
import { packageVersion } from "../../support/version.js";
import { VERSION_HEADER } from "../../support/versions-meet.js";
import { type Common, EXIT, type Io } from "../io.js";
import { type ClientTarget, clientTarget, noAnswer } from "../target.js";

export interface RelayStreams {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
}

/** The most an upgrade's answer head (or a refusal with its line) may take. */
const MAX_UPGRADE_ANSWER = 16 * 1024;

export async function runMcp(
  options: Common & { readonly tokenFile?: string | undefined },
  io: Io,
  streams: RelayStreams,
): Promise<number> {
  let token: string | undefined;
  if (options.tokenFile !== undefined)
    try {
      // A file held like every credential (0600, bounded), for an operator's remote session.
      token = await readTokenFile(options.tokenFile);
    } catch (e) {
      io.err(`harness mcp: ${(e as Error).message}`);
      return EXIT.usage;
    }
  else token = io.env[MCP_TOKEN_ENV]?.trim();
  if (token === undefined || token === "") {
    io.err(
      `harness mcp: ${MCP_TOKEN_ENV} is not set; give it the gateway token of this run (harness token create --gateway), or --token-file FILE`,
    );
    return EXIT.usage;
  }
  const target = await clientTarget({ ...options, env: io.env });
  if (target.remote) return remoteRelay(target, token, io, streams);
  const socketPath = mcpSocketPath(target.socketPath);
  return relay(net.connect(socketPath), "connect", token, io, streams, (e) => {
    io.err(`harness mcp: no daemon gateway answers on ${socketPath}: ${e.code ?? e.message}`);
  });
}

/**
 * Pipes stdin and the gateway once `ready` is emitted on `socket` (after writing the preamble); resolves
 * when the gateway ends the session.
 */
function relay(
  socket: net.Socket,
  ready: "connect" | "upgraded",
  token: string,
  io: Io,
  streams: RelayStreams,
  notConnected: (e: NodeJS.ErrnoException) => void,
  rest: Buffer = Buffer.alloc(0),
): Promise<number> {
  return new Promise<number>((resolve) => {
    let connected = false;
    const start = () => {
      connected = true;
      socket.write(encodePreamble(token));
      if (rest.length > 0) streams.stdout.write(rest);
      streams.stdin.pipe(socket);
      socket.pipe(streams.stdout);
    };
    if (ready === "upgraded") start();
    else socket.once(ready, start);
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (!connected) {
        notConnected(e);
        resolve(EXIT.unreachable);
      } else io.err(`harness mcp: the gateway connection failed: ${e.message}`);
    });
    // The daemon ends the session (the client went away, the token was refused or revoked): so do we.
    socket.on("close", () => {
      if (connected) resolve(EXIT.ok);
    });
  });
}

/** How long the remote daemon has to answer the gateway upgrade, the TLS handshake included. */
const UPGRADE_TIMEOUT_MS = 10_000;

/** Over the remote daemon's TLS listener: the upgrade, then the relay; a refused upgrade says why. */
async function remoteRelay(
  target: ClientTarget,
  token: string,
  io: Io,
  streams: RelayStreams,
): Promise<number> {
  const url = new URL(target.where);
  const rpc = target.rpc as { readonly tls?: Parameters<typeof clientTlsOptions>[0] };
  let files: tls.ConnectionOptions;
  try {
    files = rpc.tls === undefined ? {} : clientTlsOptions(rpc.tls);
  } catch (e) {
    io.err(`harness mcp: ${(e as Error).message}`);
    return EXIT.usage;
  }
  const socket = tls.connect({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: Number(url.port === "" ? 443 : url.port),
    servername: net.isIP(url.hostname) === 0 ? url.hostname : undefined,
    ...files,
  });
  const answer = await new Promise<{ head: string; rest: Buffer } | { error: string }>((resolve) => {
    let buffered = Buffer.alloc(0);
    // A listener that accepts and never answers must not hold the agent's MCP client forever.
    const timer = setTimeout(
      () =>
        done({
          error: `no answer from ${target.where} to the gateway upgrade in ${UPGRADE_TIMEOUT_MS / 1000} s`,
        }),
      UPGRADE_TIMEOUT_MS,
    );
    const done = (r: { head: string; rest: Buffer } | { error: string }) => {
      clearTimeout(timer);
      socket.off("data", onData);
      resolve(r);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end >= 0 && buffered.subarray(0, 13).toString("latin1").startsWith("HTTP/1.1 101 "))
        return done({ head: buffered.subarray(0, end).toString("latin1"), rest: buffered.subarray(end + 4) });
      if (buffered.length > MAX_UPGRADE_ANSWER)
        done({ error: "the daemon's answer to the upgrade is too long" });
    };
    socket.on("data", onData);
    socket.once("secureConnect", () =>
      socket.write(
        `GET ${MCP_UPGRADE_PATH} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: Upgrade\r\nupgrade: ${MCP_UPGRADE}\r\n${VERSION_HEADER}: ${packageVersion()}\r\n\r\n`,
      ),
    );
    socket.once("end", () => {
      const text = buffered.toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3}[^\r]*)/.exec(text)?.[1];
      const body = text.split("\r\n\r\n")[1]?.trim();
      done({
        error:
          status === undefined
            ? noAnswer(target.where)
            : `the daemon refused the gateway upgrade (${status})${body === undefined || body === "" ? "" : `: ${body}`}`,
      });
    });
    socket.once("error", () => done({ error: noAnswer(target.where) }));
  });
  if ("error" in answer) {
    socket.destroy();
    // Printable only: the text is the daemon's, or a proxy's in front of it.
    io.err(`harness mcp: ${answer.error.replace(/[^\x20-\x7e]/g, "?")}`);
    return EXIT.unreachable;
  }
  return relay(socket, "upgraded", token, io, streams, () => {}, answer.rest);
}
