/**
 * The hook endpoint over HTTP/1.1: `POST /hooks/<adapter>?harness=NAME` with the hook's payload as the
 * body, `Authorization: Bearer <observer token>` and `X-Harness-Ledger-Token: <ledger token>`. Claude
 * Code's `http` hook posts here on `[agents] listen` (loopback only; it fails open by Claude Code's
 * design: a refused connection, a non-2xx answer or a timeout lets the tool run), and the command
 * forwarder posts the same request over the daemon's Unix socket. The answer body is the agent's
 * decision JSON (empty: no decision); `X-Harness-Row` and `X-Harness-Note` tell the forwarder what
 * became of the row.
 *
 * A remote install's forwarder (decision 0017) marks its body as an envelope with `X-Harness-Hook-Facts:
 * 1` (the payload inside, with the git facts it computed and its clock; `supplied-facts.ts`). A call on a
 * TLS connection may come from another machine, so the ingest runs no git for it.
 *
 * The observer token is checked from the headers before a byte of the body is read: a caller
 * without one is answered 401 at once, so no unauthenticated body is buffered. Which harness a token is
 * bound to is still checked by the ingest, after mapping, as for every call.
 */
import * as http from "node:http";
import type * as net from "node:net";
import type * as tls from "node:tls";
import { peerIdentity } from "../../support/tls-listener.js";
import { VERSION_HEADER, versionRefusal } from "../../support/versions-meet.js";
import { FAIL_QUERY } from "./fail-mode.js";
import type { HookFormats } from "./hook-format.js";
import { isCallNonce } from "./hook-key.js";
import {
  HOOK_AT_HEADER,
  HOOK_CALL_HEADER,
  HOOK_FACTS_HEADER,
  HOOK_KEY_HEADER,
  HOOK_PATH_PREFIX,
  LEDGER_TOKEN_HEADER,
  MAX_FACTS_BYTES,
  MAX_HOOK_PAYLOAD_BYTES,
  NOTE_HEADER,
  ROW_HEADER,
} from "./hook-limits.js";
import type { HookIngest, IngestResponse } from "./ingest.js";

/** A header value Node will send: printable ASCII on one line (a note may quote a path). */
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, "?").slice(0, 1000);

function send(
  res: http.ServerResponse,
  status: number,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, headerSafe(v)])),
  });
  res.end(body);
}

function sendResponse(res: http.ServerResponse, r: IngestResponse): void {
  send(res, r.status, r.answer, {
    [ROW_HEADER]: r.row,
    ...(r.note === undefined ? {} : { [NOTE_HEADER]: r.note }),
  });
}

function tooLarge(req: http.IncomingMessage, res: http.ServerResponse): void {
  send(res, 413, "", {
    [NOTE_HEADER]: `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`,
    connection: "close",
  });
  req.resume();
}

/** The body, or undefined (and a 413 sent) when it passes `limit`. */
function readBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  limit: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        tooLarge(req, res);
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on("error", () => {
      if (!over) resolve(undefined);
    });
  });
}

const header = (req: http.IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
};

/** What the endpoint asks before it reads a body. */
export interface HookGate {
  /** Whether the token is one the daemon knows for the observer producer (the ingest's identify). */
  readonly isObserver: (token: string) => boolean;
  /** Told of each call answered 401 from its headers. */
  readonly unauthenticated?: () => void;
  /**
   * The daemon's version (decision 0018): answered on every call, and a forwarder whose version does not
   * meet it is answered 412 with the reason, which the forwarder turns into its fail mode.
   */
  readonly version?: string;
}

/** Why the bearer token cannot call at all, in the ingest's words, or undefined when it may. */
function refusedToken(bearer: string | undefined, gate: HookGate): string | undefined {
  if (bearer === undefined)
    return "the Authorization bearer token (the observer producer credential) is missing";
  if (!gate.isObserver(bearer))
    return "the Authorization bearer token is not one the daemon knows for the observer producer";
  return undefined;
}

/**
 * Handles `POST /hooks/<format>` for each of `formats` (the adapter registry's); `onError` hears of a
 * failure the caller is answered 500 for.
 */
export function hookRequestListener(
  ingest: HookIngest,
  onError: (e: unknown) => void,
  gate: HookGate,
  formats: HookFormats,
): http.RequestListener {
  const paths = formats.hookNames.map((name) => `${HOOK_PATH_PREFIX}${name}`).join(", ");
  return (req, res) => {
    if (gate.version !== undefined) {
      res.setHeader(VERSION_HEADER, gate.version);
      const refusal = versionRefusal(gate.version, header(req, VERSION_HEADER));
      if (refusal !== undefined) {
        send(res, 412, "", { [ROW_HEADER]: "none", [NOTE_HEADER]: refusal, connection: "close" });
        req.resume();
        return;
      }
    }
    const url = new URL(req.url ?? "/", "http://hooks.invalid");
    const format = url.pathname.startsWith(HOOK_PATH_PREFIX)
      ? formats.hook(url.pathname.slice(HOOK_PATH_PREFIX.length))
      : undefined;
    if (format === undefined) {
      send(res, 404, "", { [NOTE_HEADER]: `hook paths are ${paths}` });
      req.resume();
      return;
    }
    if (req.method !== "POST") {
      send(res, 405, "", { allow: "POST" });
      req.resume();
      return;
    }
    // An envelope carries the facts its forwarder computed beside the payload (`supplied-facts.ts`).
    const envelope = header(req, HOOK_FACTS_HEADER) === "1";
    const limit = MAX_HOOK_PAYLOAD_BYTES + (envelope ? MAX_FACTS_BYTES : 0);
    // Both answered from the headers, before any of the body is read.
    if (Number(req.headers["content-length"] ?? "0") > limit) {
      tooLarge(req, res);
      return;
    }
    const bearer = /^Bearer (\S+)$/.exec(header(req, "authorization") ?? "")?.[1];
    const refused = refusedToken(bearer, gate);
    if (refused !== undefined) {
      gate.unauthenticated?.();
      send(res, 401, "", { [ROW_HEADER]: "none", [NOTE_HEADER]: refused, connection: "close" });
      req.resume();
      return;
    }
    const at = Number(header(req, HOOK_AT_HEADER));
    const key = header(req, HOOK_KEY_HEADER);
    const call = header(req, HOOK_CALL_HEADER);
    const fail = url.searchParams.get(FAIL_QUERY);
    // Over TLS the caller may be on another machine: the daemon runs no git on a path it names.
    const remote = (req.socket as Partial<tls.TLSSocket>).encrypted === true;
    const peer = remote ? peerIdentity(req.socket) : undefined;
    void readBody(req, res, limit)
      .then(async (body) => {
        if (body === undefined) return;
        const r = await ingest.handle({
          format,
          harness: url.searchParams.get("harness") ?? "",
          ...(bearer === undefined ? {} : { observerToken: bearer }),
          ...(header(req, LEDGER_TOKEN_HEADER) === undefined
            ? {}
            : { ledgerToken: header(req, LEDGER_TOKEN_HEADER) as string }),
          body,
          ...(Number.isSafeInteger(at) && at > 0 ? { at } : {}),
          ...(key === undefined ? {} : { key }),
          ...(call !== undefined && isCallNonce(call) ? { call } : {}),
          ...(fail === null ? {} : { fail }),
          ...(envelope ? { envelope } : {}),
          ...(remote ? { remote } : {}),
          ...(peer === undefined ? {} : { peer }),
        });
        sendResponse(res, r);
      })
      .catch((e: unknown) => {
        onError(e);
        if (!res.headersSent) send(res, 500, "", { [NOTE_HEADER]: "the daemon failed to ingest the call" });
      });
  };
}

export interface HookListener {
  /** `host:port` it is bound to. */
  readonly address: string;
  close(): Promise<void>;
}

/** The most connections `[agents] listen` holds open; one more is closed at once. */
export const MAX_HOOK_CONNECTIONS = 128;

/** Starts `[agents] listen`: the http hook endpoint alone, on a loopback address. */
export function startHookListener(
  host: string,
  port: number,
  listener: http.RequestListener,
  refused: () => void = () => {},
  /** Makes the server: plain http unless given (the composition root's TLS server, decision 0014). */
  serve: (listener: http.RequestListener) => http.Server = (l) => http.createServer(l),
): Promise<HookListener> {
  const server = serve(listener);
  server.maxConnections = MAX_HOOK_CONNECTIONS;
  server.on("drop", refused);
  // A hook's request is small and answered at once; a slow client may not hold a connection open.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const a = server.address() as net.AddressInfo;
      resolve({
        address: a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
