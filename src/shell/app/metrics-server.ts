/**
 * `/metrics` over HTTP (SPEC-0029 REQ-20), on `[server] metrics_listen`, behind `metrics_token_file`'s
 * bearer token when one is set. A port it cannot bind is an error the daemon exits with: a
 * listener the config names and the operator relies on is never quietly missing.
 */
import * as http from "node:http";
import { bearerMatches, type TokenDigest } from "../rpc/credentials.js";
import type { DaemonMetrics } from "../support/metrics.js";
import type { TlsListeners } from "../support/tls-listener.js";

export interface MetricsServer {
  /** `http(s)://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function serveMetrics(options: {
  readonly host: string;
  readonly port: number;
  readonly token: TokenDigest | undefined;
  readonly metrics: DaemonMetrics;
  /** `[server]` TLS: scrapers then connect over https (with a client certificate under mutual TLS). */
  readonly tls?: TlsListeners;
  /** Brings the gauges read at scrape time up to date. */
  readonly beforeScrape: () => void;
}): Promise<MetricsServer> {
  const { host, port, token, metrics } = options;
  const handle: http.RequestListener = (req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      res.writeHead(401, { "WWW-Authenticate": 'Bearer realm="harness metrics"' }).end();
      return;
    }
    options.beforeScrape();
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "Content-Type": metrics.registry.contentType }).end(text),
      (e: Error) => res.writeHead(500).end(e.message),
    );
  };
  const server = options.tls === undefined ? http.createServer(handle) : options.tls.httpsServer(handle);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const a = server.address();
      const address = typeof a === "object" && a !== null ? `${host}:${a.port}` : `${host}:${port}`;
      resolve({
        url: `${options.tls === undefined ? "http" : "https"}://${address}/metrics`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
