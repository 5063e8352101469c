/**
 * One HTTP/1.1 request over a Unix socket, written and read by hand: the command hook's only call.
 * Node's `http` client costs a hook tens of milliseconds to load and set up on every tool call (measured
 * 20-35 ms between the tokens read and the request sent, here); a request with `Connection: close`
 * needs none of it: the answer is the status line, the headers and the body, complete once its
 * `Content-Length` bytes are in (or, without one, at the server's close). Not waiting for the close
 * matters: Node's server closes the connection only after the response's `finish`, a turn of its event
 * loop later, and a hook row's commit (an fsync of tens of milliseconds) runs in that turn. The same
 * request goes over TLS to a remote daemon (`https-post.ts`), for the same reason.
 */
import * as net from "node:net";

export interface RawResponse {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/** A failure to get an answer at all: no socket, refused, reset, timed out, or not HTTP. */
export class RawHttpError extends Error {
  constructor(
    message: string,
    /** No answer within the time given: unlike a refused connection, the server may be up but stuck. */
    readonly timedOut = false,
  ) {
    super(message);
    this.name = "RawHttpError";
  }
}

/** The largest answer read: a hook's decision JSON and its headers are a few hundred bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Header values go on one line: anything else is refused rather than sent. */
const SAFE_HEADER = /^[\x20-\x7e]*$/;

/** The response in `data`, or undefined while its headers or its `Content-Length` bytes are still to come. */
function completeResponse(data: Buffer): RawResponse | undefined {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const response = parseResponse(data);
  const length = Number(response.headers.get("content-length"));
  return Number.isSafeInteger(length) && data.length - (end + 4) >= length ? response : undefined;
}

function parseResponse(data: Buffer): RawResponse {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) throw new RawHttpError("the answer ended inside its headers");
  const [statusLine = "", ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (status === undefined) throw new RawHttpError("the answer is not HTTP/1.1");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = Number(headers.get("content-length"));
  const rest = data.subarray(end + 4);
  return {
    status: Number(status),
    headers,
    body: Number.isSafeInteger(length) ? rest.subarray(0, length) : rest,
  };
}

/** POSTs `body` to `path` on the Unix socket `socketPath`, giving up after `timeoutMs`. */
export const rawPost = (
  socketPath: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  timeoutMs: number,
): Promise<RawResponse> =>
  rawPostOn(
    { open: () => net.connect(socketPath), ready: "connect", host: "localhost" },
    path,
    headers,
    body,
    timeoutMs,
  );

/**
 * Where a request goes: a socket `open` makes, ready to write at its `ready` event (`connect`, or
 * `secureConnect` for a TLS socket once its handshake is done), and the `Host` header's value.
 */
export interface RawConnection {
  readonly open: () => net.Socket;
  readonly ready: "connect" | "secureConnect";
  readonly host: string;
}

/** POSTs `body` to `path` over the connection `to` opens, giving up after `timeoutMs`. */
export function rawPostOn(
  to: RawConnection,
  path: string,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  timeoutMs: number,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    for (const [name, value] of Object.entries(headers))
      if (!SAFE_HEADER.test(name) || !SAFE_HEADER.test(value)) {
        reject(new RawHttpError(`header ${name} is not one line of printable ASCII`));
        return;
      }
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${to.host}`,
      "Connection: close",
      `Content-Length: ${body.byteLength}`,
      ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`),
      "",
      "",
    ].join("\r\n");
    const chunks: Buffer[] = [];
    let settled = false;
    let socket: net.Socket;
    try {
      socket = to.open();
    } catch (e) {
      reject(new RawHttpError((e as NodeJS.ErrnoException).code ?? (e as Error).message));
      return;
    }
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(
        e instanceof RawHttpError ? e : new RawHttpError((e as NodeJS.ErrnoException).code ?? e.message),
      );
    };
    socket.setTimeout(timeoutMs, () => fail(new RawHttpError("timed out", true)));
    // A server may answer and close before it has read the whole body (a 404 or 413 does): the write
    // then fails, but the answer already read is still the answer.
    socket.on("error", (e) => {
      settle(completeResponse);
      fail(e);
    });
    const settle = (parse: (data: Buffer) => RawResponse | undefined) => {
      if (settled) return;
      try {
        const response = parse(Buffer.concat(chunks));
        if (response === undefined) return;
        settled = true;
        socket.destroy();
        resolve(response);
      } catch (e) {
        fail(e as Error);
      }
    };
    let size = 0;
    socket.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_ANSWER_BYTES) {
        fail(new RawHttpError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
        return;
      }
      chunks.push(c);
      settle(completeResponse);
    });
    socket.on("end", () => settle(parseResponse));
    // No half-close after the body: Node's server aborts a request whose client ended its side before
    // the answer was written. `Connection: close` has the server close once it has answered.
    // Head and body in one writev: a server that answers from the head alone (a 404) and closes would
    // otherwise reset the connection as the body arrives, and the answer would be lost with it.
    socket.on(to.ready, () => {
      socket.cork();
      socket.write(head);
      socket.write(body);
      socket.uncork();
    });
  });
}
