/**
 * The MCP gateway (SPEC-0029 REQ-15) inside the daemon: a Unix socket of its own beside the RPC socket
 * (0600, in a directory held to the RPC socket's rules), one MCP session per connection. It lives in
 * the daemon's process because REQ-17 lets no RPC store a proposal: propose_rule is a function call
 * here. A connection first presents its caller's token (`protocol.ts`); the daemon identifies the
 * caller from it alone. A connection whose token is unknown, revoked or expired is answered with an
 * error to its `initialize` and closed, so the agent sees the refusal at initialisation.
 *
 * Bounded, so no client can exhaust the daemon: at most `MAX_GATEWAY_SESSIONS` sessions at once, the
 * next refused the same way with the reason; at most `MAX_GATEWAY_CONNECTIONS` connections at once
 * (sessions and connections still presenting a token), the next closed unanswered. Both refusals are
 * counted.
 */
import * as net from "node:net";
import { DEFAULT_READ_MAX_BYTES } from "../rpc/limits.js";
import { capConnections, listenOnSocket, prepareSocketPath } from "../rpc/server.js";
import { SocketLineTransport } from "./line-transport.js";
import { decodePreamble, MAX_PREAMBLE_BYTES } from "./protocol.js";
import { openSession } from "./session.js";
import type { GatewayDeps } from "./session-context.js";

/** How long a connection may take to present its token. */
const PREAMBLE_TIMEOUT_MS = 10_000;
/** JSON-RPC's code for a server-defined error: the token was refused. */
const TOKEN_REFUSED = -32001;
/** JSON-RPC's code for a server-defined error: the gateway has its most sessions open. */
const SESSIONS_FULL = -32002;
/** One MCP session costs about 140 KB; 256 of them bound the gateway near 36 MB. */
export const MAX_GATEWAY_SESSIONS = 256;
/** Sessions plus room for connections still presenting their token. */
export const MAX_GATEWAY_CONNECTIONS = MAX_GATEWAY_SESSIONS + 32;

export interface GatewayCaps {
  readonly maxSessions?: number;
  /** Told of each connection or session refused for a cap. */
  readonly refused?: (what: "connection" | "session") => void;
}

export interface GatewayServer {
  readonly socketPath: string;
  /** Sessions open now. */
  readonly sessions: number;
  /**
   * Serves a connection that arrived elsewhere (the TLS listener's upgrade, `rpc/server.ts`) as one on the
   * socket: under the same caps, presenting its token first.
   */
  adopt(socket: net.Socket): void;
  close(): Promise<void>;
}

export async function startGateway(
  socketPath: string,
  deps: GatewayDeps,
  caps: GatewayCaps = {},
): Promise<GatewayServer> {
  const open = new Set<net.Socket>();
  const maxSessions = caps.maxSessions ?? MAX_GATEWAY_SESSIONS;
  let sessions = 0;
  const admitSession = (socket: net.Socket): boolean => {
    if (sessions >= maxSessions) {
      caps.refused?.("session");
      return false;
    }
    sessions++;
    socket.once("close", () => sessions--);
    return true;
  };
  const maxConnections = maxSessions + (MAX_GATEWAY_CONNECTIONS - MAX_GATEWAY_SESSIONS);
  const serve = (socket: net.Socket): void => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    // A peer that goes away mid-write is the end of its session, not a fault of the daemon.
    socket.on("error", () => socket.destroy());
    accept(socket, deps, admitSession, maxSessions);
  };
  // Both doors, the socket and the TLS listener's upgrade (`adopt`), count against one total.
  const admitConnection = (socket: net.Socket): void => {
    if (open.size >= maxConnections) {
      caps.refused?.("connection");
      socket.destroy();
      return;
    }
    serve(socket);
  };
  const server = net.createServer(admitConnection);
  capConnections(server, maxConnections, () => caps.refused?.("connection"));
  await prepareSocketPath(socketPath);
  await listenOnSocket(server, socketPath);
  return {
    socketPath,
    get sessions() {
      return sessions;
    },
    adopt: admitConnection,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Reads the preamble, then opens the caller's session or refuses it. */
function accept(
  socket: net.Socket,
  deps: GatewayDeps,
  admitSession: (socket: net.Socket) => boolean,
  maxSessions: number,
): void {
  let buffered = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), PREAMBLE_TIMEOUT_MS);
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const newline = buffered.indexOf(0x0a);
    if (newline < 0) {
      if (buffered.length > MAX_PREAMBLE_BYTES)
        refuse(socket, Buffer.alloc(0), TOKEN_REFUSED, tokenRefusal("no token was presented"));
      return;
    }
    socket.off("data", onData);
    clearTimeout(timer);
    const token = decodePreamble(buffered.subarray(0, newline).toString("utf8"));
    const rest = buffered.subarray(newline + 1);
    const caller = token === undefined ? undefined : deps.identify(token);
    if (token === undefined || caller === undefined) {
      deps.log.info({}, "gateway connection refused: unknown, revoked or expired token");
      refuse(
        socket,
        rest,
        TOKEN_REFUSED,
        tokenRefusal("the token in HARNESS_MCP_TOKEN is unknown, revoked or expired"),
      );
      return;
    }
    if (!admitSession(socket)) {
      deps.log.warn({ harness: caller.harness, run: caller.run }, "gateway session refused: sessions full");
      refuse(
        socket,
        rest,
        SESSIONS_FULL,
        `harness gateway: ${maxSessions} sessions are open, the most it holds; try again when one has ended.`,
      );
      return;
    }
    const end = () => socket.destroy();
    const { server, miner } = openSession(caller, token, deps, end);
    const transport = new SocketLineTransport(socket, rest, DEFAULT_READ_MAX_BYTES);
    socket.on("close", () => {
      void server.close();
    });
    // A message over the limit ends the session; the relay then exits.
    transport.onerror = (e) => {
      deps.log.info({ harness: caller.harness, run: caller.run, err: e.message }, "gateway session error");
    };
    server.connect(transport).then(
      () =>
        deps.log.info(
          { harness: caller.harness, run: caller.run, token: caller.tokenId, miner },
          "gateway session opened",
        ),
      () => end(),
    );
    const close = transport.onclose;
    transport.onclose = () => {
      close?.();
      end();
    };
  };
  socket.on("data", onData);
}

const tokenRefusal = (why: string): string =>
  `harness gateway: ${why}. Ask the operator for a gateway token (harness token create --gateway) and pass it to harness mcp in HARNESS_MCP_TOKEN.`;

/**
 * Answers the connection's first request (its `initialize`) with a JSON-RPC error saying why, then
 * closes it: the client's `connect` fails with that message rather than with a bare closed pipe.
 */
function refuse(socket: net.Socket, rest: Buffer, code: number, message: string): void {
  let buffered = rest;
  const answer = (): boolean => {
    const newline = buffered.indexOf(0x0a);
    if (newline < 0) {
      if (buffered.length > MAX_PREAMBLE_BYTES * 64) socket.destroy();
      return false;
    }
    let id: unknown = null;
    try {
      id = (JSON.parse(buffered.subarray(0, newline).toString("utf8")) as { id?: unknown }).id ?? null;
    } catch {
      id = null;
    }
    socket.end(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`);
    return true;
  };
  if (answer()) return;
  const timer = setTimeout(() => socket.destroy(), PREAMBLE_TIMEOUT_MS);
  socket.on("data", (c: Buffer) => {
    buffered = Buffer.concat([buffered, c]);
    if (answer()) clearTimeout(timer);
  });
}
