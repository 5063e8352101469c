/**
 * TLS for the listeners that leave the machine (issue 32 item 1, decision 0014): the certificate, key and
 * optional client CA read with length bounds, https servers over Node's own `tls` (no hand-written
 * crypto) for ConnectRPC's TCP listener, the agents' hook endpoint and `/metrics`, the secure context
 * swapped on `harness reload` (connections in flight keep the context they were accepted with), and the
 * identity a client certificate proves under mutual TLS.
 */
import { X509Certificate } from "node:crypto";
import type * as http from "node:http";
import * as https from "node:https";
import type * as net from "node:net";
import * as tls from "node:tls";
import { readBounded } from "./bounded-read.js";

/** `[server] tls_cert_file`, `tls_key_file` and, for mutual TLS, `client_ca_file`. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile?: string | undefined;
}

/** A PEM chain, key or CA bundle is a few KiB; more is not a certificate file. */
export const MAX_TLS_FILE_BYTES = 256 * 1024;
/** The longest client certificate subject CN recorded beside a row. */
export const MAX_PEER_NAME = 256;

/** What the files held, checked to parse and to match: a context is never built from half of them. */
export interface TlsMaterial {
  readonly files: TlsFiles;
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | undefined;
  /** The leaf certificate's SHA-256 fingerprint, `AB:CD:…` as Node and openssl print it. */
  readonly certSha256: string;
}

/** The client certificate's identity under mutual TLS, recorded beside the rows it appends. */
export interface PeerIdentity {
  /** The subject CN, control characters replaced, at most `MAX_PEER_NAME` characters. */
  readonly name: string;
  /** The client certificate's SHA-256 fingerprint. */
  readonly fingerprint: string;
}

export class TlsConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TlsConfigError";
  }
}

function readPem(path: string, what: string): Buffer {
  const r = readBounded(path, MAX_TLS_FILE_BYTES);
  if ("error" in r) throw new TlsConfigError(`${what} ${path}: ${r.error}`);
  if (r.bytes.length > MAX_TLS_FILE_BYTES)
    throw new TlsConfigError(`${what} ${path} is larger than ${MAX_TLS_FILE_BYTES} bytes`);
  if (r.bytes.length === 0) throw new TlsConfigError(`${what} ${path} is empty`);
  return Buffer.from(r.bytes);
}

/** Reads and checks the files: the certificate parses, the key is its key, the CA bundle parses. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const cert = readPem(files.certFile, "[server] tls_cert_file");
  const key = readPem(files.keyFile, "[server] tls_key_file");
  const ca =
    files.clientCaFile === undefined ? undefined : readPem(files.clientCaFile, "[server] client_ca_file");
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (e) {
    throw new TlsConfigError(`[server] tls_cert_file ${files.certFile}: not a PEM certificate`, { cause: e });
  }
  try {
    // Builds the context Node would serve with: a key that is not the certificate's fails here.
    tls.createSecureContext({ cert, key, ...(ca === undefined ? {} : { ca }) });
  } catch (e) {
    throw new TlsConfigError(
      `[server] tls_cert_file, tls_key_file${ca === undefined ? "" : ", client_ca_file"}: ${(e as Error).message}`,
      { cause: e },
    );
  }
  return { files, cert, key, ca, certSha256: leaf.fingerprint256 };
}

/** The options a listener's secure context is made of; with a CA, only its clients are let in. */
function contextOptions(m: TlsMaterial): tls.SecureContextOptions {
  return { cert: m.cert, key: m.key, ...(m.ca === undefined ? {} : { ca: m.ca }), minVersion: "TLSv1.2" };
}

/**
 * The servers one `TlsMaterial` serves on, so a reload swaps every listener's context at once: new
 * handshakes take the new certificate, connections already open keep theirs and are never dropped.
 */
export class TlsListeners {
  private readonly servers: tls.Server[] = [];

  constructor(private current: TlsMaterial) {}

  get material(): TlsMaterial {
    return this.current;
  }

  /** Whether clients must present a certificate from `client_ca_file` (mutual TLS). */
  get mutual(): boolean {
    return this.current.ca !== undefined;
  }

  /** An https server (HTTP/1.1 over TLS) for `listener`, following this holder's reloads. */
  httpsServer(listener: http.RequestListener): https.Server {
    const server = https.createServer(
      {
        ...contextOptions(this.current),
        // Under mutual TLS the handshake itself refuses a client without a certificate from the CA.
        requestCert: this.mutual,
        rejectUnauthorized: this.mutual,
      },
      listener,
    );
    this.servers.push(server);
    server.once("close", () => {
      const i = this.servers.indexOf(server);
      if (i >= 0) this.servers.splice(i, 1);
    });
    return server;
  }

  /**
   * Swaps in `next` on every server. Mutual TLS cannot be switched on or off here (a server asks for
   * client certificates from its start): that takes a restart.
   */
  rotate(next: TlsMaterial): void {
    if ((next.ca === undefined) !== (this.current.ca === undefined))
      throw new TlsConfigError(
        "[server] client_ca_file was added or removed: mutual TLS changes only with a restart",
      );
    for (const s of this.servers) s.setSecureContext(contextOptions(next));
    this.current = next;
  }
}

/** A client's TLS files against a remote daemon: the CA that signed its certificate, and its own pair. */
export interface ClientTlsFiles {
  readonly caFile?: string | undefined;
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
}

/** The `https.request` options of `files`, each read with the same bound as the server's. */
export function clientTlsOptions(files: ClientTlsFiles): Pick<tls.ConnectionOptions, "ca" | "cert" | "key"> {
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    throw new TlsConfigError(
      "a client certificate needs its key: give --client-cert and --client-key together",
    );
  return {
    ...(files.caFile === undefined ? {} : { ca: readPem(files.caFile, "--ca-file") }),
    ...(files.certFile === undefined ? {} : { cert: readPem(files.certFile, "--client-cert") }),
    ...(files.keyFile === undefined ? {} : { key: readPem(files.keyFile, "--client-key") }),
  };
}

const CONTROL = /\p{Cc}/gu;

/**
 * The verified client certificate behind `socket`, or undefined: a plain socket, no certificate, or one
 * the handshake did not verify against `client_ca_file`.
 */
export function peerIdentity(socket: net.Socket | undefined): PeerIdentity | undefined {
  if (!(socket instanceof tls.TLSSocket) || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (cert === null || typeof cert !== "object" || cert.fingerprint256 === undefined) return undefined;
  const cn = cert.subject?.CN;
  return { name: peerName(Array.isArray(cn) ? cn.join(",") : (cn ?? "")), fingerprint: cert.fingerprint256 };
}

/** A subject CN as recorded: the peer's own text, bounded, and never a terminal control where shown. */
export const peerName = (cn: string): string =>
  Array.from(cn.slice(0, MAX_PEER_NAME * 2))
    .slice(0, MAX_PEER_NAME)
    .join("")
    .replace(CONTROL, "\uFFFD");
