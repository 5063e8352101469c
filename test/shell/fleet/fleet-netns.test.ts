/**
 * A fleet on one machine over real network namespaces (issue 32): the daemon in a "server" namespace on
 * its own address with TLS, laptops in namespaces of their own reaching it only over their links. The
 * scenarios here are the ones the operator's and producers' paths answer; the agents' hooks across the
 * namespaces are in fleet-agents-netns.test.ts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lab, type Laptop, makeLab, NETNS_AVAILABLE, SERVER_ADDRESS } from "../../support/netns.js";
import { journalCount, journalPeers } from "../../support/store-reads.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";
import { CLI, jsonl, TestFleet } from "../daemon-harness.js";

/** On CI the namespaces must run (CI is root and installs iproute2); elsewhere, without root, they skip. */
const RUN = NETNS_AVAILABLE || process.env.CI !== undefined;

const EVENT = (harness: string, n: number) => ({
  kind: "run_event",
  type: "opened",
  harness,
  run: `${harness}#${n}`,
});

/** A fleet whose `[server]` table gets `lines`, its daemon in `netns`. */
const serverFleet = (netns: string, lines: readonly string[]): TestFleet =>
  new TestFleet({ netns, server: lines });

/** The RPC listener's URL from the daemon's start line. */
function rpcUrl(stderr: string): string {
  const m = /rpc (https:\/\/[^\s,]+),/.exec(stderr);
  if (m === null) throw new Error(`no TLS start line in: ${stderr}`);
  return m[1] as string;
}

/** Runs the built `harness` CLI on `laptop`. */
const cli = (laptop: Laptop, args: readonly string[], stdin?: string) =>
  laptop.run(process.execPath, [CLI, ...args], stdin === undefined ? {} : { stdin });

/** Copies `file` into the laptop's home, private, as an operator hands a machine its token. */
function handOver(laptop: Laptop, file: string, name: string): string {
  const to = path.join(laptop.root, name);
  fs.copyFileSync(file, to);
  fs.chmodSync(to, 0o600);
  return to;
}

describe.skipIf(!RUN)("a fleet over network namespaces", () => {
  let lab: Lab;
  let certs: TestCerts;
  let fleet: TestFleet;
  let rpc: string;
  beforeAll(async () => {
    lab = makeLab(2);
    certs = makeTestCerts([SERVER_ADDRESS]);
    fleet = serverFleet(lab.server, [
      `listen = "${SERVER_ADDRESS}:0"`,
      `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
      `tls_key_file = ${JSON.stringify(certs.server.key)}`,
      `client_ca_file = ${JSON.stringify(certs.ca)}`,
    ]);
    rpc = rpcUrl(await fleet.start());
  }, 60_000);
  afterAll(async () => {
    await fleet?.dispose();
    certs?.dispose();
    lab?.dispose();
  });

  /** A laptop's `journal append` to the server over mutual TLS with `pair`'s client certificate. */
  const append = (
    laptop: Laptop,
    token: string,
    pair: { cert: string; key: string },
    events: Record<string, unknown>[],
  ) =>
    cli(
      laptop,
      [
        "journal",
        "append",
        "--token-file",
        token,
        "--daemon",
        rpc,
        "--ca-file",
        certs.ca,
        "--client-cert",
        pair.cert,
        "--client-key",
        pair.key,
      ],
      jsonl(events),
    );

  it("the daemon is reached from every laptop over its own link, and never on loopback there", async () => {
    expect(rpc).toMatch(new RegExp(`^https://${SERVER_ADDRESS.replaceAll(".", "\\.")}:\\d+$`));
    for (const [i, laptop] of lab.laptops.entries()) {
      const token = handOver(laptop, fleet.tokens.get("ledger") as string, "ledger.token");
      const r = await append(laptop, token, certs.client, [EVENT(`laptop${i + 1}`, 1)]);
      expect(r.stderr).toContain("1 admitted, 0 not");
      expect(r.code).toBe(0);
    }
    expect(journalPeers(fleet, { kind: "run_event" }).map((p) => p.peerName)).toEqual([
      "laptop-1",
      "laptop-1",
    ]);
    // The server's address is not the laptop's own: on the laptop's loopback nothing listens.
    const port = new URL(rpc).port;
    const local = await lab.laptops[0]?.run("curl", ["-sS", "--max-time", "3", `http://127.0.0.1:${port}/`]);
    expect(local?.code).not.toBe(0);
  });

  it("A client certificate from another CA is refused", async () => {
    const laptop = lab.laptops[1] as Laptop;
    const token = handOver(laptop, fleet.tokens.get("ledger") as string, "ledger.token");
    const before = journalCount(fleet, { kind: "run_event" });
    const r = await append(laptop, token, certs.foreignClient, [EVENT("intruder", 1)]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("the connection or its TLS handshake failed");
    expect(journalCount(fleet, { kind: "run_event" })).toBe(before);
  });

  it("A revoked machine token is refused at once", async () => {
    const laptop = lab.laptops[0] as Laptop;
    const file = path.join(fleet.root, "laptop1-ledger.token");
    const made = await fleet.cli([
      "token",
      "create",
      "--producer",
      "ledger",
      "--label",
      "laptop 1",
      "--out",
      file,
      "--json",
    ]);
    expect(made.code).toBe(0);
    const { id } = JSON.parse(made.stdout) as { id: string };
    const token = handOver(laptop, file, "ledger.token");
    expect((await append(laptop, token, certs.client, [EVENT("revoked-before", 1)])).code).toBe(0);
    expect(journalCount(fleet, { harness: "revoked-before" })).toBe(1);

    expect((await fleet.cli(["token", "revoke", id])).code).toBe(0);
    const refused = await append(laptop, token, certs.client, [EVENT("revoked-after", 1)]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown bearer token/);
    expect(journalCount(fleet, { harness: "revoked-after" })).toBe(0);
  });
});

describe.skipIf(!RUN)("a server's listeners off loopback", () => {
  it("A plaintext non-loopback listener is refused", async () => {
    const lab = makeLab(1);
    const fleet = serverFleet(lab.server, [`listen = "${SERVER_ADDRESS}:0"`]);
    try {
      await expect(fleet.start()).rejects.toThrow(
        /\[server\] listen: 10\.77\.0\.1 is not a loopback address: a plaintext listener there would carry tokens and rows in the clear/,
      );
    } finally {
      await fleet.dispose();
      lab.dispose();
    }
  });
});
