/**
 * The command hook's call to a remote daemon (decision 0017): one POST over TLS to its hook endpoint
 * (`[agents] listen` under `[server]` TLS), trusting the CA file install named (else the system's), and
 * presenting the client certificate when the daemon asks for one (mutual TLS). Node's own `tls`, with
 * the request written and read by hand as over the socket (`raw-http.ts`): Node's `https` client costs
 * a hook's start more than the call. Failures to get an answer are `RawHttpError`s, as over the socket,
 * so the forwarder spools alike.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as tls from "node:tls";
import type { RemoteDaemon } from "../ingest/hook-limits.js";
import { RawHttpError, type RawResponse, rawPostOn } from "./raw-http.js";

/** The largest PEM file read (a CA bundle, a certificate chain, a key), as the daemon bounds its own. */
const MAX_PEM_BYTES = 256 * 1024;

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
export function tlsOptions(daemon: RemoteDaemon): tls.SecureContextOptions {
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
  const url = new URL(daemon.url);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port === "" ? 443 : url.port);
  return rawPostOn(
    {
      // Read inside `open`, so a missing file is the call's failure, spooled like any other.
      open: () =>
        tls.connect({
          host,
          port,
          ...tlsOptions(daemon),
          // SNI takes a name, never an address.
          ...(net.isIP(host) === 0 ? { servername: host } : {}),
          ALPNProtocols: ["http/1.1"],
        }),
      ready: "secureConnect",
      host: url.host,
    },
    path,
    headers,
    body,
    timeoutMs,
  );
}
