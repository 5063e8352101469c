/**
 * The daemon's ConnectRPC server: HTTP/1.1 on the operator's Unix socket (0600, in a 0700 directory)
 * and, opt-in, on TCP, over TLS when `[server]` names a certificate (`support/tls-listener.ts`; mutual TLS
 * with a client CA, the client certificate's identity handed to the handlers as `PEER`). HTTP/1.1 rather
 * than h2c, because Node's http2 server cannot also speak HTTP/1.1 without TLS, and HTTP/1.1 serves every
 * Connect client (curl included) and server streaming alike.
 * Each listener has its own tier interceptor (`tiers.ts`), so a caller's listener is known from where the
 * call arrived, never from anything the caller says.
 */
import { setMaxListeners } from "node:events";
import * as fs from "node:fs/promises";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { isMainThread } from "node:worker_threads";
import type { JsonReadOptions } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { peerIdentity, type TlsListeners } from "../support/tls-listener.js";
import { packageVersion } from "../support/version.js";
import { VERSION_HEADER, versionRefusal } from "../support/versions-meet.js";
import type { CredentialHolder } from "./credentials.js";
import { JournalService } from "./gen/harness/v1/journal_pb.js";
import { type Admit, journalService, type Rejected } from "./journal-service.js";
import { DEFAULT_READ_MAX_BYTES } from "./limits.js";
import { type Listener, METHOD_TIERS, PEER, tierInterceptor } from "./tiers.js";

export { DEFAULT_READ_MAX_BYTES } from "./limits.js";

export interface RpcServerOptions {
  readonly socketPath: string;
  /** `host:port` (`[::1]:port` for IPv6; port 0 picks one) of the opt-in TCP listener. */
  readonly tcpListen?: string;
  /** TLS on the TCP listener: its certificate, swapped on reload, and whether clients need one too. */
  readonly tls?: TlsListeners;
  /** Read on every call, so a reload's replacement is in force from the next call on. */
  readonly credentials: CredentialHolder;
  readonly admit: Admit;
  /** Told of each event Append refuses (the daemon counts and logs them); none in tests that need not. */
  readonly rejected?: Rejected;
  readonly readMaxBytes?: number;
  /** Further services (RuleService): every method they serve must have a tier in `METHOD_TIERS`. */
  readonly routes?: (router: ConnectRouter) => void;
  /**
   * Plain HTTP served on the socket beside Connect, for paths under `prefix` (the agent hook endpoint,
   * which authenticates its own callers): not RPC methods, so no tier applies.
   */
  readonly socketRoutes?: { readonly prefix: string; readonly handler: http.RequestListener };
  /** The most connections each listener holds open; one more is closed at once. */
  readonly maxConnections?: { readonly socket: number; readonly tcp: number };
  /** Told of each connection a listener closed at once for its cap. */
  readonly refused?: (listener: Listener) => void;
  /**
   * A connection on the TCP listener that asks to upgrade to `protocol` (`harness mcp --daemon`, the MCP
   * gateway's stream): handed over once its version and path are checked.
   */
  readonly upgrade?: {
    readonly protocol: string;
    readonly path: string;
    readonly accept: (socket: net.Socket) => void;
  };
  /** This daemon's version (decision 0018), answered on every response; the package's unless told. */
  readonly version?: string;
}

/**
 * The caps on open connections, so no client can exhaust the daemon's descriptors: the socket carries
 * every local client and the command hook's calls, so it takes more than the opt-in TCP listener.
 * Connect clients keep connections alive, so a cap counts clients more than calls.
 */
export const MAX_SOCKET_CONNECTIONS = 256;
export const MAX_TCP_CONNECTIONS = 128;

/** Makes `server` close at once each connection past `max`, telling `refused`. */
export function capConnections(server: net.Server, max: number, refused: () => void): void {
  server.maxConnections = max;
  server.on("drop", refused);
}

export interface RpcServer {
  close(): Promise<void>;
  readonly socketPath: string;
  /** `host:port` the TCP listener is bound to, when there is one. */
  readonly tcpAddress?: string;
}

export class RpcServerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RpcServerError";
  }
}

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const shutdown = new AbortController();
  // Every request in flight listens on the shutdown signal (and stops listening when it ends), so more
  // than Node's default of 10 at once is normal, not a leak.
  setMaxListeners(0, shutdown.signal);
  const version = options.version ?? packageVersion();
  const connect = (listener: Listener): http.RequestListener =>
    connectNodeAdapter({
      routes: (router) => {
        router.service(JournalService, journalService(options.admit, options.rejected ?? (() => {})));
        options.routes?.(router);
        assertEveryMethodTiered(router);
      },
      // Versions first: a client too old or too new is told so, whatever its token.
      interceptors: [versionInterceptor(version), tierInterceptor(listener, options.credentials)],
      // Read from the connection the call arrived on: a verified client certificate, under mutual TLS.
      contextValues: (req) => {
        const values = createContextValues();
        const peer = peerIdentity(req.socket);
        if (peer !== undefined) values.set(PEER, peer);
        return values;
      },
      readMaxBytes: options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
      jsonOptions: STRICT_JSON,
      // Streaming handlers (WatchEvents, Backtest) see this and end when the server closes.
      shutdownSignal: shutdown.signal,
    });
  // Every answer says the daemon's version, the hook endpoint's and a refusal's too.
  const handler = (listener: Listener): http.RequestListener => {
    const rpc = connect(listener);
    return (req, res) => {
      res.setHeader(VERSION_HEADER, version);
      rpc(req, res);
    };
  };

  const socketRpc = handler("socket");
  const extra = options.socketRoutes;
  const socketServer = http.createServer(
    extra === undefined
      ? socketRpc
      : (req, res) => {
          if (req.url?.startsWith(extra.prefix) !== true) return socketRpc(req, res);
          res.setHeader(VERSION_HEADER, version);
          extra.handler(req, res);
        },
  );
  const refused = options.refused ?? (() => {});
  capConnections(socketServer, options.maxConnections?.socket ?? MAX_SOCKET_CONNECTIONS, () =>
    refused("socket"),
  );
  await prepareSocketPath(options.socketPath);
  await listenOnSocket(socketServer, options.socketPath);
  const servers = [socketServer];
  let tcpAddress: string | undefined;
  if (options.tcpListen !== undefined) {
    const tcpServer =
      options.tls === undefined ? http.createServer(handler("tcp")) : options.tls.httpsServer(handler("tcp"));
    capConnections(tcpServer, options.maxConnections?.tcp ?? MAX_TCP_CONNECTIONS, () => refused("tcp"));
    const upgrade = options.upgrade;
    if (upgrade !== undefined)
      tcpServer.on("upgrade", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
        upgradeTo(upgrade, version, req, socket, head),
      );
    try {
      tcpAddress = await listenOnTcp(tcpServer, options.tcpListen);
    } catch (e) {
      await closeServer(socketServer);
      throw e;
    }
    servers.push(tcpServer);
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      shutdown.abort();
      await Promise.all(servers.map(closeServer));
    })();
    return closing;
  };
  return { close, socketPath: options.socketPath, ...(tcpAddress === undefined ? {} : { tcpAddress }) };
}

/**
 * Refuses, with FAILED_PRECONDITION and both versions named, a call whose client sent a version that does
 * not meet the daemon's (`support/versions-meet.ts`).
 */
export function versionInterceptor(version: string): Interceptor {
  return (next) => async (req) => {
    const refusal = versionRefusal(version, req.header.get(VERSION_HEADER) ?? undefined);
    if (refusal !== undefined) throw new ConnectError(refusal, Code.FailedPrecondition);
    return await next(req);
  };
}

/** The most bytes a client may send after its upgrade request before the stream is handed over. */
const MAX_UPGRADE_HEAD = 64 * 1024;

/**
 * An HTTP/1.1 upgrade to the one protocol served this way: answered 101 and handed to `accept`, or
 * answered with the status and a line saying why (a wrong path or protocol 404, versions apart 412).
 */
function upgradeTo(
  upgrade: NonNullable<RpcServerOptions["upgrade"]>,
  version: string,
  req: http.IncomingMessage,
  socket: net.Socket,
  head: Buffer,
): void {
  socket.on("error", () => socket.destroy());
  const refuse = (status: string, why: string): void => {
    socket.end(
      `HTTP/1.1 ${status}\r\n${VERSION_HEADER}: ${version}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(why) + 1}\r\nconnection: close\r\n\r\n${why}\n`,
    );
  };
  const asked = req.headers.upgrade?.toLowerCase();
  if (asked !== upgrade.protocol || req.url !== upgrade.path || head.length > MAX_UPGRADE_HEAD) {
    refuse("404 Not Found", `this listener upgrades only ${upgrade.path} to ${upgrade.protocol}`);
    return;
  }
  const sent = req.headers[VERSION_HEADER];
  const refusal = versionRefusal(version, typeof sent === "string" ? sent : undefined);
  if (refusal !== undefined) {
    refuse("412 Precondition Failed", refusal);
    return;
  }
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: ${upgrade.protocol}\r\nconnection: Upgrade\r\n${VERSION_HEADER}: ${version}\r\n\r\n`,
  );
  if (head.length > 0) socket.unshift(head);
  upgrade.accept(socket);
}

/**
 * JSON bodies decoded strictly: invalid UTF-8 is refused (INVALID_ARGUMENT) rather than turned into
 * U+FFFD and journaled, as the binary codec refuses it in a string. Connect hands these options to its
 * JSON serialization, which takes the decoder (`createJsonSerialization`).
 */
const STRICT_JSON: Partial<JsonReadOptions> & { readonly textDecoder: { decode(b?: Uint8Array): string } } = {
  textDecoder: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }),
};

function assertEveryMethodTiered(router: ConnectRouter): void {
  for (const { service, method } of router.handlers) {
    const name = `${service.typeName}/${method.name}`;
    if (!METHOD_TIERS.has(name))
      throw new RpcServerError(`RPC method ${name} is served but has no tier in src/shell/rpc/tiers.ts`);
  }
}

/**
 * Makes the socket path ready to bind: its directory exists (created 0700), is ours and is not writable
 * by others (a directory someone else controls could swap the socket), and nothing live answers on it.
 * A stale socket file left by a crash is removed; any other file there is refused, never deleted.
 */
export async function prepareSocketPath(socketPath: string): Promise<void> {
  const dir = path.dirname(socketPath);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const dirStat = await fs.stat(dir);
  const uid = process.getuid?.();
  if (uid !== undefined && dirStat.uid !== uid)
    throw new RpcServerError(
      `socket directory ${dir} belongs to uid ${dirStat.uid}, not to this user (${uid})`,
    );
  if ((dirStat.mode & 0o022) !== 0)
    throw new RpcServerError(
      `socket directory ${dir} is writable by group or others (mode ${(dirStat.mode & 0o777).toString(8)}); it should be 0700`,
    );
  const existing = await fs.lstat(socketPath).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return undefined;
    throw new RpcServerError(`cannot inspect ${socketPath}: ${e.message}`, { cause: e });
  });
  if (existing === undefined) return;
  if (!existing.isSocket())
    throw new RpcServerError(`${socketPath} exists and is not a socket; refusing to replace it`);
  if (await answers(socketPath))
    throw new RpcServerError(`another server is already listening on ${socketPath}; is a daemon running?`);
  await fs.unlink(socketPath);
}

/** Whether something accepts connections on a Unix socket. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = net.connect(socketPath);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ECONNREFUSED") resolve(false);
      else reject(new RpcServerError(`cannot probe ${socketPath}: ${e.message}`, { cause: e }));
    });
  });
}

/** Listens on a prepared socket path, creating the socket 0600 (the MCP gateway's socket too). */
export async function listenOnSocket(server: net.Server, socketPath: string): Promise<void> {
  // Node binds synchronously inside listen(), so a umask set around that one call creates the socket
  // 0600 with no moment at which another user could connect, and touches no other file; the chmod below
  // states the mode outright. Worker threads cannot set the umask and rely on the chmod and the
  // directory's mode alone.
  await listen(
    server,
    () => {
      const previous = isMainThread ? process.umask(0o177) : undefined;
      try {
        server.listen(socketPath);
      } finally {
        if (previous !== undefined) process.umask(previous);
      }
    },
    `the socket ${socketPath}`,
  );
  try {
    await fs.chmod(socketPath, 0o600);
  } catch (e) {
    // Nothing has connected yet: the socket was created a moment ago, 0600 under the umask.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw new RpcServerError(`cannot chmod the socket ${socketPath}: ${(e as Error).message}`, { cause: e });
  }
}

async function listenOnTcp(server: http.Server, address: string): Promise<string> {
  const { host, port } = parseListen(address);
  await listen(server, () => server.listen(port, host), `TCP ${address}`);
  const bound = server.address() as net.AddressInfo;
  return bound.family === "IPv6" ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
}

/** `host:port` or `[v6]:port`. */
function parseListen(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (host === undefined || !Number.isInteger(port) || port > 65535)
    throw new RpcServerError(`TCP listen address ${JSON.stringify(address)} must be host:port or [v6]:port`);
  return { host, port };
}

function listen(server: net.Server, start: () => void, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => {
      reject(new RpcServerError(`cannot listen on ${what}: ${e.message}`, { cause: e }));
    };
    server.once("error", onError);
    server.once("listening", () => {
      server.off("error", onError);
      resolve();
    });
    start();
  });
}

/** How long calls in flight may take to finish once the server closes, before they are cut off. */
const CLOSE_GRACE_MS = 5000;
/** How often a closing server drops keep-alive connections that have become idle. */
const IDLE_SWEEP_MS = 20;

/**
 * Stops accepting and lets calls in flight finish. Node closes only the connections idle at close(), so
 * a connection whose call finishes later would linger for its keep-alive timeout: sweep those as they
 * go idle, and cut off whatever is still running after the grace period.
 */
function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const cutoff = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    server.close((e) => {
      clearInterval(sweep);
      clearTimeout(cutoff);
      if (e === undefined) resolve();
      else reject(new RpcServerError(`closing the RPC server: ${e.message}`, { cause: e }));
    });
  });
}
