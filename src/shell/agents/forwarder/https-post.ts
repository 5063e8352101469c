/**
 * The command hook's call to a remote daemon (decision 0017): one POST over https to its hook endpoint
 * (`[agents] listen` under `[server]` TLS), trusting the CA file install named (else the system's), and
 * presenting the client certificate when the daemon asks for one (mutual TLS). Node's own `https`; no
 * connection is kept, as the hook process ends with the call. The answer's body is bounded. Failures to
 * get an answer are `RawHttpError`s, as over the socket, so the forwarder spools alike.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { RemoteDaemon } from "../ingest/hook-limits.js";
import { RawHttpError, type RawResponse } from "./raw-http.js";

/** The largest PEM file read (a CA bundle, a certificate chain, a key), as the daemon bounds its own. */
const MAX_PEM_BYTES = 256 * 1024;
/** The largest answer read: a hook's decision JSON is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A PEM file's bytes, or a `RawHttpError` naming it. */
function pem(file: string, what: string): Buffer {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_PEM_BYTES)
      throw new RawHttpError(`${what} ${file} is not a file of at most ${MAX_PEM_BYTES} bytes`);
    return fs.readFileSync(fd);
  } catch (e) {
    if (e instanceof RawHttpError) throw e;
    throw new RawHttpError(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The TLS options for `daemon`'s files, read now (each call is a new process: nothing to cache). */
export function tlsOptions(daemon: RemoteDaemon): https.RequestOptions {
  return {
    ...(daemon.caFile === undefined ? {} : { ca: pem(daemon.caFile, "the CA file") }),
    ...(daemon.clientCert === undefined ? {} : { cert: pem(daemon.clientCert, "the client certificate") }),
    ...(daemon.clientKey === undefined ? {} : { key: pem(daemon.clientKey, "the client key") }),
  };
}

/** POSTs `body` to `path` on `daemon`, giving up after `timeoutMs`. */
export function httpsPost(
  daemon: RemoteDaemon,
  path: string,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  timeoutMs: number,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      reject(
        e instanceof RawHttpError ? e : new RawHttpError((e as NodeJS.ErrnoException).code ?? e.message),
      );
    };
    let options: https.RequestOptions;
    try {
      options = tlsOptions(daemon);
    } catch (e) {
      fail(e as Error);
      return;
    }
    const url = new URL(path, daemon.url);
    const req = https.request(url, {
      ...options,
      method: "POST",
      agent: false,
      headers: { ...headers, "content-length": String(body.byteLength), connection: "close" },
    });
    const timer = setTimeout(() => {
      fail(new RawHttpError("timed out", true));
      req.destroy();
    }, timeoutMs);
    req.on("error", (e) => {
      clearTimeout(timer);
      fail(e);
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) {
          clearTimeout(timer);
          fail(new RawHttpError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          req.destroy();
        } else chunks.push(c);
      });
      res.on("end", () => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        const map = new Map<string, string>();
        for (const [k, v] of Object.entries(res.headers))
          if (typeof v === "string") map.set(k.toLowerCase(), v);
        resolve({ status: res.statusCode ?? 0, headers: map, body: Buffer.concat(chunks) });
      });
      res.on("error", (e) => {
        clearTimeout(timer);
        fail(e);
      });
    });
    req.end(body);
  });
}
