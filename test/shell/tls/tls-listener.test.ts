/** `support/tls-listener.ts`: bounded PEM reads, https servers, mutual TLS's peer identity, rotation. */
import * as fs from "node:fs";
import * as https from "node:https";
import type * as net from "node:net";
import * as path from "node:path";
import type * as tls from "node:tls";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clientTlsOptions,
  loadTlsMaterial,
  MAX_PEER_NAME,
  MAX_TLS_FILE_BYTES,
  type PeerIdentity,
  peerIdentity,
  peerName,
  TlsConfigError,
  TlsListeners,
} from "../../../src/shell/support/tls-listener.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";

let certs: TestCerts;
beforeAll(() => {
  certs = makeTestCerts();
});
afterAll(() => certs.dispose());

/** An https server on 127.0.0.1 answering each request with the peer identity it saw, as JSON. */
async function serve(listeners: TlsListeners): Promise<{ port: number; close(): Promise<void> }> {
  const server = listeners.httpsServer((req, res) => {
    res.end(JSON.stringify(peerIdentity(req.socket) ?? null));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function get(
  port: number,
  options: https.RequestOptions,
): Promise<{ peer: PeerIdentity | null; serverSha256: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: "127.0.0.1", port, path: "/", ...options }, (res) => {
      const serverSha256 = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => resolve({ peer: JSON.parse(body) as PeerIdentity | null, serverSha256 }));
    });
    req.on("error", reject);
  });
}

const files = (c: TestCerts, mutual: boolean) => ({
  certFile: c.server.cert,
  keyFile: c.server.key,
  ...(mutual ? { clientCaFile: c.ca } : {}),
});

describe("tls listener", () => {
  it("loads the certificate, its key and the client CA, with the certificate's sha256", () => {
    const m = loadTlsMaterial(files(certs, true));
    expect(m.certSha256).toBe(certs.server.sha256);
    expect(m.ca).toBeDefined();
  });

  it("refuses a key that is not the certificate's, an empty file, an oversized one, a missing one", () => {
    const dir = certs.dir;
    const empty = path.join(dir, "empty.pem");
    const huge = path.join(dir, "huge.pem");
    fs.writeFileSync(empty, "");
    fs.writeFileSync(huge, "x".repeat(MAX_TLS_FILE_BYTES + 1));
    const attempt = (f: Parameters<typeof loadTlsMaterial>[0]) => () => loadTlsMaterial(f);
    expect(attempt({ certFile: certs.server.cert, keyFile: certs.client.key })).toThrow(TlsConfigError);
    expect(attempt({ certFile: empty, keyFile: certs.server.key })).toThrow(/is empty/);
    expect(attempt({ certFile: huge, keyFile: certs.server.key })).toThrow(/larger than 262144 bytes/);
    expect(attempt({ certFile: path.join(dir, "none.pem"), keyFile: certs.server.key })).toThrow(
      /tls_cert_file .*none\.pem: cannot read the file/,
    );
    expect(() => clientTlsOptions({ certFile: certs.client.cert })).toThrow(/--client-cert and --client-key/);
  });

  it("plain TLS: any client that trusts the CA is served, with no peer identity", async () => {
    const s = await serve(new TlsListeners(loadTlsMaterial(files(certs, false))));
    try {
      const r = await get(s.port, { ca: fs.readFileSync(certs.ca) });
      expect(r).toEqual({ peer: null, serverSha256: certs.server.sha256 });
    } finally {
      await s.close();
    }
  });

  it("mutual TLS: the client certificate's CN and sha256 are the peer's identity", async () => {
    const s = await serve(new TlsListeners(loadTlsMaterial(files(certs, true))));
    try {
      const r = await get(
        s.port,
        clientTlsOptions({ caFile: certs.ca, certFile: certs.client.cert, keyFile: certs.client.key }),
      );
      expect(r.peer).toEqual({ name: "laptop-1", fingerprint: certs.client.sha256 });
    } finally {
      await s.close();
    }
  });

  it("A client certificate from another CA is refused", async () => {
    const s = await serve(new TlsListeners(loadTlsMaterial(files(certs, true))));
    try {
      const foreign = clientTlsOptions({
        caFile: certs.ca,
        certFile: certs.foreignClient.cert,
        keyFile: certs.foreignClient.key,
      });
      await expect(get(s.port, foreign)).rejects.toThrow();
      // No certificate at all is refused the same way.
      await expect(get(s.port, clientTlsOptions({ caFile: certs.ca }))).rejects.toThrow();
    } finally {
      await s.close();
    }
  });

  it("rotation: new handshakes get the new certificate, an open connection keeps working", async () => {
    const listeners = new TlsListeners(loadTlsMaterial(files(certs, true)));
    const s = await serve(listeners);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const client = clientTlsOptions({
      caFile: certs.ca,
      certFile: certs.client.cert,
      keyFile: certs.client.key,
    });
    try {
      const before = await get(s.port, { ...client, agent });
      expect(before.serverSha256).toBe(certs.server.sha256);
      listeners.rotate(
        loadTlsMaterial({ certFile: certs.server2.cert, keyFile: certs.server2.key, clientCaFile: certs.ca }),
      );
      expect(listeners.material.certSha256).toBe(certs.server2.sha256);
      // The kept-alive connection was accepted under the old certificate and is still served.
      const kept = await get(s.port, { ...client, agent });
      expect(kept).toEqual({ peer: before.peer, serverSha256: certs.server.sha256 });
      const fresh = await get(s.port, client);
      expect(fresh.serverSha256).toBe(certs.server2.sha256);
      // Mutual TLS is fixed at start.
      expect(() => listeners.rotate(loadTlsMaterial(files(certs, false)))).toThrow(/only with a restart/);
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it("a recorded peer name is at most MAX_PEER_NAME code points, with no control character", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 2000 }), (cn) => {
        const name = peerName(cn);
        expect(Array.from(name).length).toBeLessThanOrEqual(MAX_PEER_NAME);
        expect(/\p{Cc}/u.test(name)).toBe(false);
        if (Array.from(cn).length <= MAX_PEER_NAME && !/\p{Cc}/u.test(cn)) expect(name).toBe(cn);
      }),
    );
  });

  it("peerIdentity of a plain socket is undefined", () => {
    expect(peerIdentity(undefined)).toBeUndefined();
  });
});
