/**
 * `harness mcp`: what an agent's MCP config launches (SPEC-0029 REQ-15). A relay and nothing more: it
 * connects to the daemon's gateway socket, presents the token from `HARNESS_MCP_TOKEN` as one preamble
 * line (`gateway/protocol.ts` says why there), then copies stdin to the socket and the socket to
 * stdout, byte for byte. Stdout carries only the protocol; what the relay has to say goes to stderr.
 * The tools, the caller's identity and every check live in the daemon.
 */
import * as net from "node:net";
import { encodePreamble, MCP_TOKEN_ENV, mcpSocketPath } from "../../gateway/protocol.js";
import { type Common, EXIT, type Io } from "../io.js";
import { clientTarget } from "../target.js";

export interface RelayStreams {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
}

export async function runMcp(options: Common, io: Io, streams: RelayStreams): Promise<number> {
  const token = io.env[MCP_TOKEN_ENV]?.trim();
  if (token === undefined || token === "") {
    io.err(
      `harness mcp: ${MCP_TOKEN_ENV} is not set; give it the gateway token of this run (harness token create --gateway)`,
    );
    return EXIT.usage;
  }
  const target = await clientTarget({ socket: options.socket, config: options.config, env: io.env });
  const socketPath = mcpSocketPath(target.socketPath);
  return new Promise<number>((resolve) => {
    const socket = net.connect(socketPath);
    let connected = false;
    socket.once("connect", () => {
      connected = true;
      socket.write(encodePreamble(token));
      streams.stdin.pipe(socket);
      socket.pipe(streams.stdout);
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (!connected) {
        io.err(`harness mcp: no daemon gateway answers on ${socketPath}: ${e.code ?? e.message}`);
        resolve(EXIT.unreachable);
      } else io.err(`harness mcp: the gateway connection failed: ${e.message}`);
    });
    // The daemon ends the session (the client went away, the token was refused or revoked): so do we.
    socket.on("close", () => {
      if (connected) resolve(EXIT.ok);
    });
  });
}
