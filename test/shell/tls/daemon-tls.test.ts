/**
 * A real daemon on TLS (decision 0014): the CLI over `--daemon https://…`, mutual TLS's client identity
 * recorded beside the rows it appends, a foreign CA's client refused, and `harness reload` rotating the
 * certificate while a client keeps working.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import * as tls from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { journalCount, journalPeers, journalRows } from "../../support/store-reads.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";
import { freePort, jsonl, TestFleet } from "../daemon-harness.js";

let certs: TestCerts;
beforeAll(() => {
  certs = makeTestCerts();
});
afterAll(() => certs.dispose());

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

/** A fleet whose `[server]` table gets `lines`. */
function fleetWith(lines: readonly string[], config?: string): TestFleet {
  const f = new TestFleet({ server: lines, ...(config === undefined ? {} : { config }) });
  fleets.push(f);
  return f;
}

/** TLS from files in the fleet's own directory, so a test can replace them and reload. */
function tlsFleet(
  mutual: boolean,
  config?: string,
  port = 0,
): { fleet: TestFleet; cert: string; key: string } {
  const dir = fs.mkdtempSync(path.join(certs.dir, "daemon-"));
  const cert = path.join(dir, "server.pem");
  const key = path.join(dir, "server.key");
  fs.copyFileSync(certs.server.cert, cert);
  fs.copyFileSync(certs.server.key, key);
  const fleet = fleetWith(
    [
      `listen = "127.0.0.1:${port}"`,
      `tls_cert_file = ${JSON.stringify(cert)}`,
      `tls_key_file = ${JSON.stringify(key)}`,
      ...(mutual ? [`client_ca_file = ${JSON.stringify(certs.ca)}`] : []),
    ],
    config,
  );
  return { fleet, cert, key };
}

/** The RPC listener's URL and the certificate's sha256 from the daemon's start line. */
function startLine(stderr: string): { rpc: string; metrics: string; sha256: string } {
  const m = /rpc (https:\/\/[^\s,]+), tls sha256 ([0-9A-F:]+), metrics (https:\/\/[^\s,]+),/.exec(stderr);
  if (m === null) throw new Error(`no TLS start line in: ${stderr}`);
  return { rpc: m[1] as string, sha256: m[2] as string, metrics: m[3] as string };
}

/** A GET over https with `options`' TLS files: its status, or the error that refused it. */
function httpsStatus(url: string, options: https.RequestOptions): Promise<number | string> {
  return new Promise((resolve) => {
    https
      .get(url, options, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

const EVENT = {
  kind: "run_event",
  type: "tool",
  harness: "impl",
  run: "impl#1",
  action: "edit",
  paths: ["a.go"],
};

describe("daemon over TLS", () => {
  it("the CLI over --daemon https, and mTLS identity in the journal", async () => {
    const { fleet } = tlsFleet(true);
    const { rpc, metrics, sha256 } = startLine(await fleet.start());
    expect(sha256).toBe(certs.server.sha256);
    // /metrics is served over the same mutual TLS.
    const ca = fs.readFileSync(certs.ca);
    const clientPair = { cert: fs.readFileSync(certs.client.cert), key: fs.readFileSync(certs.client.key) };
    expect(await httpsStatus(metrics, { ca, ...clientPair })).toBe(200);
    expect(await httpsStatus(metrics, { ca })).not.toBe(200);
    const remote = [
      "--daemon",
      rpc,
      "--ca-file",
      certs.ca,
      "--client-cert",
      certs.client.cert,
      "--client-key",
      certs.client.key,
    ];
    const appended = await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("observer") as string, ...remote],
      jsonl([EVENT]),
    );
    expect(appended.stderr).toContain("1 admitted, 0 not");
    expect(appended.code).toBe(0);
    // A local append through the socket has no peer.
    const local = await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
      jsonl([EVENT]),
    );
    expect(local.code).toBe(0);
    const listed = await fleet.cli(["rules", "list", "--json", ...remote]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("name");
    expect(
      journalPeers(fleet, { kind: "run_event" }).map(({ source, peerName, peerFingerprint }) => ({
        source,
        peerName,
        peerFingerprint,
      })),
    ).toEqual([
      { source: "observer", peerName: "laptop-1", peerFingerprint: certs.client.sha256 },
      { source: "observer", peerName: null, peerFingerprint: null },
    ]);
    // The identity is beside the row, never one of its event's fields (REQ-4).
    for (const r of journalRows(fleet, { kind: "run_event" }))
      expect(JSON.stringify(r.event)).not.toContain("laptop-1");
  });

  it("A client certificate from another CA is refused", async () => {
    const { fleet } = tlsFleet(true);
    const { rpc } = startLine(await fleet.start());
    const r = await fleet.cli(
      [
        "journal",
        "append",
        "--token-file",
        fleet.tokens.get("observer") as string,
        "--daemon",
        rpc,
        "--ca-file",
        certs.ca,
        "--client-cert",
        certs.foreignClient.cert,
        "--client-key",
        certs.foreignClient.key,
      ],
      jsonl([EVENT]),
    );
    expect(r.code).not.toBe(0);
    // The daemon's alert may reach the client before the connection drops, or not (TLS 1.3): either way
    // the line says what may have refused it, and nothing was admitted.
    expect(r.stderr).toBe(
      `harness journal append: no answer from ${rpc}: the connection or its TLS handshake failed (under mutual TLS a client certificate from another CA, or none, is refused); 0 admitted, 0 not before that; from line 1 on, nothing is known to be admitted\n`,
    );
    expect(r.code).toBe(3);
    expect(journalCount(fleet, { kind: "run_event" })).toBe(0);
  });

  it("A plaintext non-loopback listener is refused", async () => {
    const fleet = fleetWith(['listen = "0.0.0.0:0"']);
    await expect(fleet.start()).rejects.toThrow(
      /\[server\] listen: 0\.0\.0\.0 is not a loopback address: a plaintext listener there would carry tokens and rows in the clear/,
    );
  });

  it("reload rotates the certificate while a client keeps working", async () => {
    const { fleet, cert, key } = tlsFleet(true);
    const { rpc } = startLine(await fleet.start());
    const token = fs.readFileSync(fleet.tokens.get("observer") as string, "utf8").trim();
    const client = journalClient(
      { baseUrl: rpc, tls: { caFile: certs.ca, certFile: certs.client.cert, keyFile: certs.client.key } },
      token,
    );
    const append = async () => {
      const r = await client.append({
        events: [{ kind: "run_event", event: { type: "tool", harness: "impl", run: "impl#1" } }],
      });
      return r.results[0]?.result.case;
    };
    expect(await append()).toBe("admitted");
    fs.copyFileSync(certs.server2.cert, cert);
    fs.copyFileSync(certs.server2.key, key);
    const reloaded = await fleet.cli(["reload"]);
    expect(reloaded.code, reloaded.stderr).toBe(0);
    // The same client goes on appending, across the swap.
    expect(await append()).toBe("admitted");
    expect(await append()).toBe("admitted");
    // A new handshake is served the new certificate.
    const url = new URL(rpc);
    const served = await new Promise<string>((resolve, reject) => {
      const s = tls.connect(
        {
          host: url.hostname,
          port: Number(url.port),
          ca: fs.readFileSync(certs.ca),
          cert: fs.readFileSync(certs.client.cert),
          key: fs.readFileSync(certs.client.key),
        },
        () => {
          resolve(s.getPeerCertificate().fingerprint256);
          s.end();
        },
      );
      s.on("error", reject);
    });
    expect(served).toBe(certs.server2.sha256);
    // The daemon logs the rotation with the new certificate's sha256.
    await fleet.until(() => fleet.daemonStdout.includes(certs.server2.sha256), "the rotation's log line");
    expect(fleet.daemonStdout).toMatch(/"tls_sha256":"[0-9A-F:]+".*"msg":"TLS certificate reloaded"/);
  });

  it("doctor checks the TLS endpoint; agents install --mode http is refused under mutual TLS", async () => {
    const { fleet } = tlsFleet(true, '[agents]\nlisten = "127.0.0.1:0"', await freePort());
    const { rpc } = startLine(await fleet.start());
    const doctor = await fleet.cli(["doctor", "--json"]);
    const row = (
      JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks.find((c) => c.name === "tls");
    expect(row).toEqual({
      name: "tls",
      // The test certificates live two days: doctor says to rotate them soon.
      status: "warn",
      detail: expect.stringMatching(
        new RegExp(
          `^${new URL(rpc).host.replace(/\./g, "\\.")} serves ${certs.server.sha256}, mutual TLS, valid until \\S+: rotate it soon \\(harness reload\\)$`,
        ),
      ),
      findings: [],
    });
    expect(
      (JSON.parse(doctor.stdout) as { checks: { name: string; status: string }[] }).checks.map((c) => [
        c.name,
        c.status,
      ]),
    ).toEqual([
      ["daemon", "pass"],
      ["rules", "pass"],
      ["store", "pass"],
      ["reload", "pass"],
      ["listen", "pass"],
      ["tls", "warn"],
      ["agents", "pass"],
    ]);
    const project = path.join(fleet.root, "project");
    fs.mkdirSync(project);
    const r = await fleet.cli([
      "agents",
      "install",
      "claude-code",
      "--harness",
      "impl",
      "--project",
      project,
      "--mode",
      "http",
    ]);
    expect(r.stderr).toBe(
      "harness agents install: --mode http is refused: the hook endpoint needs TLS with a client certificate ([server] client_ca_file), and Claude Code's http hook cannot present one; install with --mode command (the command hook reaches the daemon over its socket)\n",
    );
    expect(r.code).toBe(2);
    expect(fs.existsSync(path.join(project, ".claude"))).toBe(false);
    // A clean stop closes the TLS listeners too.
    await fleet.stop();
    expect(await fleet.exited()).toBe(0);
  });
});
