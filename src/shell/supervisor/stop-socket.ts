/**
 * The stop command's way in (contract item 2), both ends: the supervisor listens on its own Unix socket
 * (0600, in a 0700 directory), and the command sends one JSON line, `{"harness","run","rule","fire_id",
 * "seq"}`, and reads one JSON line back.
 *
 * A socket rather than a request file the supervisor watches, because the command must learn whether
 * the stop happened to exit with the right status (a file gets no answer, and file watching is
 * unreliable across platforms), and because requests then arrive on the supervisor's own event loop,
 * in order with its spawns and exits, so "is this run still in flight?" is answered against the same
 * state that starts the next run.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

/** What the daemon's stop command asks: its five appended arguments. */
export interface StopRequest {
  readonly harness: string;
  readonly run: string;
  readonly rule: string;
  readonly fire_id: string;
  readonly seq: number;
}

export type StopReply =
  | { readonly result: "stopped" | "not_in_flight"; readonly run: string; readonly in_flight: string }
  | { readonly result: "error"; readonly detail: string };

/** The stop command could not get an answer from the supervisor. */
export class StopRequestError extends Error {
  constructor(
    readonly socketPath: string,
    message: string,
    readonly unreachable: boolean,
    options?: { cause?: unknown },
  ) {
    super(`supervisor on ${socketPath}: ${message}`, options);
    this.name = "StopRequestError";
  }
}

/** A request or reply line longer than this is refused: five short identifiers never come close. */
const MAX_LINE_BYTES = 4096;
const STOP_IO_TIMEOUT_MS = 10_000;

const isString = (v: unknown): v is string => typeof v === "string";

export function parseStopRequest(value: unknown): StopRequest | string {
  if (typeof value !== "object" || value === null) return "a stop request must be a JSON object";
  const o = value as Record<string, unknown>;
  for (const k of ["harness", "run", "rule", "fire_id"] as const)
    if (!isString(o[k])) return `${k} must be a string`;
  // An empty run would leave "which run?" to the moment the request arrives: exactly the late stop
  // that must never hit the next run.
  if (o.harness === "" || o.run === "") return "harness and run must not be empty";
  if (typeof o.seq !== "number" || !Number.isSafeInteger(o.seq) || o.seq < 0)
    return "seq must be a journal sequence number";
  return {
    harness: o.harness as string,
    run: o.run as string,
    rule: o.rule as string,
    fire_id: o.fire_id as string,
    seq: o.seq,
  };
}

/** Reads one newline-terminated line of at most MAX_LINE_BYTES from `conn`. */
function readLine(conn: net.Socket, onLine: (line: string) => void, onError: (why: string) => void): void {
  let buf = "";
  const onData = (chunk: Buffer) => {
    buf += chunk.toString("utf8");
    const nl = buf.indexOf("\n");
    if (nl >= 0) {
      conn.off("data", onData);
      onLine(buf.slice(0, nl));
    } else if (Buffer.byteLength(buf) > MAX_LINE_BYTES) {
      conn.off("data", onData);
      onError(`a line longer than ${MAX_LINE_BYTES} bytes`);
    }
  };
  conn.on("data", onData);
}

/** The supervisor's end: hands each well-formed request to `handle`, on the supervisor's event loop. */
export class StopListener {
  private constructor(
    private readonly server: net.Server,
    private readonly socketPath: string,
  ) {}

  static async listen(
    socketPath: string,
    handle: (req: StopRequest) => Promise<StopReply>,
  ): Promise<StopListener> {
    await fs.promises.mkdir(path.dirname(socketPath), { recursive: true, mode: 0o700 });
    await removeStaleSocket(socketPath);
    const server = net.createServer((conn) => {
      conn.setTimeout(STOP_IO_TIMEOUT_MS, () => conn.destroy());
      conn.on("error", () => conn.destroy());
      const reply = (r: StopReply) => conn.end(`${JSON.stringify(r)}\n`);
      readLine(
        conn,
        (line) => {
          let parsed: StopRequest | string;
          try {
            parsed = parseStopRequest(JSON.parse(line) as unknown);
          } catch (e) {
            parsed = `not JSON: ${(e as Error).message}`;
          }
          if (typeof parsed === "string") {
            reply({ result: "error", detail: parsed });
            return;
          }
          handle(parsed).then(reply, (e: Error) => reply({ result: "error", detail: e.message }));
        },
        (why) => reply({ result: "error", detail: why }),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await fs.promises.chmod(socketPath, 0o600);
    return new StopListener(server, socketPath);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await fs.promises.rm(this.socketPath, { force: true });
  }
}

/** A socket file left by a supervisor that died is removed; anything else at the path is an error. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.lstat(socketPath);
  } catch {
    return;
  }
  if (!stat.isSocket())
    throw new StopRequestError(
      socketPath,
      "the path exists and is not a socket; refusing to replace it",
      false,
    );
  await fs.promises.rm(socketPath);
}

/**
 * The stop command's end: sends `req` to the supervisor on `socketPath` and resolves to its reply; a
 * `StopRequestError` says whether no supervisor was there (`unreachable`) or it failed to answer.
 */
export function requestStop(
  socketPath: string,
  req: StopRequest,
  timeoutMs = STOP_IO_TIMEOUT_MS,
): Promise<StopReply> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socketPath);
    let settled = false;
    const fail = (message: string, unreachable: boolean, cause?: unknown) => {
      if (settled) return;
      settled = true;
      conn.destroy();
      reject(new StopRequestError(socketPath, message, unreachable, { cause }));
    };
    conn.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`, false));
    conn.on("error", (e: NodeJS.ErrnoException) =>
      fail(e.message, e.code === "ENOENT" || e.code === "ECONNREFUSED", e),
    );
    conn.on("end", () => fail("closed the connection without an answer", false));
    conn.on("connect", () => conn.write(`${JSON.stringify(req)}\n`));
    readLine(
      conn,
      (line) => {
        let reply: unknown;
        try {
          reply = JSON.parse(line);
        } catch (e) {
          fail(`answered with something other than JSON: ${(e as Error).message}`, false, e);
          return;
        }
        const r = reply as Partial<Record<string, unknown>>;
        const ok =
          (r.result === "stopped" || r.result === "not_in_flight") &&
          isString(r.run) &&
          isString(r.in_flight);
        if (!ok && !(r.result === "error" && isString(r.detail))) {
          fail(`answered ${line.slice(0, 200)}, which is not a stop reply`, false);
          return;
        }
        settled = true;
        conn.end();
        resolve(reply as StopReply);
      },
      (why) => fail(`answered with ${why}`, false),
    );
  });
}
