/**
 * `harness doctor`'s `tls` row (decision 0014): when `[server]` names a certificate, its files load and
 * match, it is not expired or about to be, and the TCP listener serves it (a certificate replaced on disk
 * is served from the next `harness reload`). The handshake only reads the listener's certificate: under
 * mutual TLS the daemon then refuses doctor, which presents none, and that is expected.
 */
import { X509Certificate } from "node:crypto";
import * as tls from "node:tls";
import type { GlobalConfig } from "../../config/global-config.js";
import { loadTlsMaterial } from "../../support/tls-listener.js";
import { printable } from "../render/printable.js";

export interface TlsCheck {
  readonly name: "tls";
  readonly status: "pass" | "warn" | "fail";
  readonly detail: string;
  readonly findings: readonly never[];
}

/** A certificate this close to its end warns: rotate it (`harness reload`) before clients refuse it. */
const EXPIRY_WARNING_MS = 14 * 24 * 3_600_000;
/** How long the handshake with the listener may take. */
const HANDSHAKE_TIMEOUT_MS = 5_000;

const check = (status: TlsCheck["status"], detail: string): TlsCheck => ({
  name: "tls",
  status,
  detail: printable(detail),
  findings: [],
});

export async function tlsCheck(config: GlobalConfig | undefined, now: number): Promise<TlsCheck> {
  const files = config?.server.tls;
  if (files === undefined)
    return check(
      "pass",
      config === undefined ? "not checked: the config does not load" : "off (loopback only)",
    );
  let sha256: string;
  let notAfter: number;
  try {
    const m = loadTlsMaterial(files);
    sha256 = m.certSha256;
    notAfter = Date.parse(new X509Certificate(m.cert).validTo);
  } catch (e) {
    return check("fail", (e as Error).message);
  }
  if (notAfter <= now)
    return check("fail", `the certificate ${sha256} expired at ${new Date(notAfter).toISOString()}`);
  const mutual = files.clientCaFile === undefined ? "" : ", mutual TLS";
  const expiring = notAfter - now < EXPIRY_WARNING_MS;
  const listen = config?.server.listen;
  if (listen === undefined)
    return check(expiring ? "warn" : "pass", `certificate ${sha256}${mutual}; no [server] listen to check`);
  // A wildcard address is reached on loopback from here.
  const host = listen.host === "0.0.0.0" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host;
  const served = await servedCertificate(host, listen.port);
  const address = host.includes(":") ? `[${host}]:${listen.port}` : `${host}:${listen.port}`;
  if ("error" in served) return check("warn", `${address}: no TLS handshake: ${served.error}`);
  if (served.sha256 !== sha256)
    return check(
      "warn",
      `${address} serves certificate ${served.sha256}, not ${sha256} from tls_cert_file: harness reload serves the file's`,
    );
  const until = new Date(notAfter).toISOString();
  return check(
    expiring ? "warn" : "pass",
    `${address} serves ${sha256}${mutual}, valid until ${until}${expiring ? ": rotate it soon (harness reload)" : ""}`,
  );
}

/** The certificate a TLS listener presents, read from the handshake and not trusted for anything. */
function servedCertificate(host: string, port: number): Promise<{ sha256: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port, rejectUnauthorized: false, servername: undefined });
    const done = (r: { sha256: string } | { error: string }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ error: "timed out" }), HANDSHAKE_TIMEOUT_MS);
    socket.once("secureConnect", () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      done(fp === undefined ? { error: "no certificate" } : { sha256: fp });
    });
    socket.once("error", (e) => done({ error: e.message }));
  });
}
