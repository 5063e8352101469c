/**
 * Remote operators (issue 32 item 3, decision 0018): an operator on another machine reaches the daemon
 * over TLS with `--daemon` or `[client] daemon`, with their own control token (`harness token create
 * --control --label NAME`), and what they do is recorded under their name; `harness doctor`, `journal
 * tail`, `rules` and `harness mcp` work from there, and the read token alone reads but cannot act.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { packageVersion } from "../../../src/shell/support/version.js";
import { holds } from "../../support/store-reads.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";
import { CLI, type FleetOptions, jsonl, runProcess, TestFleet } from "../daemon-harness.js";
import { gatewayToken } from "../gateway/mcp-session.js";

let certs: TestCerts;
beforeAll(() => {
  certs = makeTestCerts();
});
afterAll(() => certs.dispose());

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

/** A daemon on mutual TLS; its RPC URL once started. */
async function tlsDaemon(options: FleetOptions = {}): Promise<{ fleet: TestFleet; url: string }> {
  const fleet = new TestFleet({
    ...options,
    server: [
      'listen = "127.0.0.1:0"',
      `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
      `tls_key_file = ${JSON.stringify(certs.server.key)}`,
      `client_ca_file = ${JSON.stringify(certs.ca)}`,
    ],
  });
  fleets.push(fleet);
  const said = await fleet.start();
  const url = /rpc (https:\/\/[^\s,]+),/.exec(said)?.[1];
  if (url === undefined) throw new Error(`no TLS start line in: ${said}`);
  return { fleet, url };
}

/** The operator's laptop: a global config whose `[client]` names the daemon and this operator's files. */
function laptop(fleet: TestFleet, url: string, lines: readonly string[]): string {
  const dir = fs.mkdtempSync(path.join(fleet.root, "laptop-"));
  const file = path.join(dir, "harness.toml");
  fs.writeFileSync(
    file,
    [
      "[client]",
      `daemon = ${JSON.stringify(url)}`,
      `ca_file = ${JSON.stringify(certs.ca)}`,
      `client_cert_file = ${JSON.stringify(certs.client.cert)}`,
      `client_key_file = ${JSON.stringify(certs.client.key)}`,
      ...lines,
      "",
    ].join("\n"),
  );
  return file;
}

const closed = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: "nightly",
  run: `nightly#${n}`,
  outcome: "budget_exceeded",
});

describe("Remote operators", () => {
  it("an operator's own control token clears a hold from another machine, and the hold records who", async () => {
    const { fleet, url } = await tlsDaemon({ enforce: ["budget-exhaustion-recurring"] });
    const alice = path.join(fleet.root, "alice.token");
    const made = await fleet.cli(["token", "create", "--control", "--label", "alice", "--out", alice]);
    expect(made.stderr).toBe("");
    expect(made.stdout).toMatch(/^tk_[0-9a-f]+: control token written to /);
    // A second token with her label would make the record ambiguous; a label is needed; "operator" is taken.
    const twice = await fleet.cli([
      "token",
      "create",
      "--control",
      "--label",
      "alice",
      "--out",
      `${alice}.2`,
    ]);
    expect(twice.stderr).toContain("a control token labelled alice is in force");
    expect((await fleet.cli(["token", "create", "--control", "--out", `${alice}.3`])).stderr).toContain(
      "--control needs --label NAME",
    );
    expect(
      (await fleet.cli(["token", "create", "--control", "--label", "operator", "--out", `${alice}.4`]))
        .stderr,
    ).toContain("the label operator is the first control token's");

    await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
      jsonl([closed(1), closed(2)]),
    );
    await fleet.until(() => holds(fleet, { inForce: true }).length === 1, "the hold");

    const config = laptop(fleet, url, [`control_token_file = ${JSON.stringify(alice)}`]);
    const held = await fleet.cli(["rules", "admission", "nightly", "--config", config]);
    expect(held.code).toBe(1);
    const cleared = await fleet.cli(["rules", "clear", "nightly", "--config", config]);
    expect(cleared.stderr).toBe("");
    expect(cleared.code).toBe(0);
    expect(holds(fleet).map((h) => [h.release_cause, h.released_by])).toEqual([["operator", "alice"]]);
    const listed = await fleet.cli(["rules", "holds", "--released", "--config", config]);
    expect(listed.stdout).toMatch(/released: operator alice at /);
    const json = JSON.parse(
      (await fleet.cli(["rules", "holds", "--released", "--json", "--config", config])).stdout,
    );
    expect(json.holds[0]).toMatchObject({ release_cause: "operator", released_by: "alice" });

    // A reload she asks for is logged as hers.
    const reloaded = await fleet.cli(["reload", "--config", config]);
    expect(reloaded.stderr).toBe("");
    await fleet.until(
      () => /"by":"alice".*"msg":"reloaded"|"msg":"reloaded".*"by":"alice"/.test(fleet.daemonStdout),
      "her reload's log line",
    );

    // Her token may not mint another operator's or replace the first.
    const mint = await fleet.cli([
      "token",
      "create",
      "--control",
      "--label",
      "mallory",
      "--out",
      `${alice}.5`,
      "--config",
      config,
    ]);
    expect(mint.stderr).toContain("only the first control token may mint an operator's control token");
    const rotate = await fleet.cli(["token", "rotate-control", "--config", config]);
    expect(rotate.stderr).toContain("only the first control token may rotate the first control token");

    // Revoked, it is refused at once, like any issued token.
    const id = /^(tk_[0-9a-f]+)/.exec(made.stdout)?.[1] as string;
    expect((await fleet.cli(["token", "revoke", id])).code).toBe(0);
    const after = await fleet.cli(["rules", "list", "--config", config]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain("unknown bearer token");
  });

  it("--daemon on doctor, journal tail and rules; a read token reads but cannot clear", async () => {
    const { fleet, url } = await tlsDaemon();
    const read = path.join(fleet.root, "read.token");
    expect((await fleet.cli(["token", "create", "--read", "--out", read])).code).toBe(0);
    await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
      jsonl([
        { kind: "run_event", type: "tool", harness: "impl", run: "impl#1", action: "edit", paths: ["a.go"] },
      ]),
    );
    // The laptop's config names only the read token; --daemon is given on the command line.
    const config = laptop(fleet, "https://unused.invalid:1", [
      `read_token_file = ${JSON.stringify(read)}`,
      `control_token_file = ${JSON.stringify(path.join(fleet.root, "no-such.token"))}`,
    ]);
    const remote = ["--daemon", url, "--config", config];

    const doctor = await fleet.cli(["doctor", "--json", ...remote]);
    const checks = (
      JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks;
    expect(checks.find((c) => c.name === "daemon")).toMatchObject({
      status: "pass",
      detail: expect.stringContaining(`answers on ${url} (harness ${packageVersion()}`),
    });
    // What only the daemon's machine can see is said to be local only, never a failure.
    for (const name of ["listen", "tls"])
      expect(checks.find((c) => c.name === name)).toMatchObject({
        status: "skip",
        detail: expect.stringContaining("local only"),
      });
    expect(checks.some((c) => c.status === "fail")).toBe(false);

    const tail = await fleet.cli(["journal", "tail", "--json", ...remote]);
    expect(tail.code).toBe(0);
    expect(tail.stdout).toContain('"harness":"impl"');
    expect((await fleet.cli(["rules", "list", ...remote])).code).toBe(0);

    const clear = await fleet.cli(["rules", "clear", "impl", ...remote]);
    expect(clear.code).not.toBe(0);
    expect(clear.stderr).toContain("the operator's control token is needed");

    // A plaintext URL is refused before anything is sent.
    const plain = await fleet.cli([
      "rules",
      "list",
      "--daemon",
      url.replace("https:", "http:"),
      "--config",
      config,
    ]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("over https only");
  });

  it("harness mcp --daemon reaches the gateway through the TLS listener, its token from a file", async () => {
    const { fleet, url } = await tlsDaemon();
    const token = await gatewayToken(fleet, "impl", "impl#9");
    const tokenFile = path.join(fleet.root, "gateway.token");
    fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI,
        "mcp",
        "--daemon",
        url,
        "--ca-file",
        certs.ca,
        "--client-cert",
        certs.client.cert,
        "--client-key",
        certs.client.key,
        "--token-file",
        tokenFile,
      ],
      env: fleet.env as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "remote-mcp-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("list_rules");
    } finally {
      await client.close();
    }
    // Without the client certificate mutual TLS refuses the connection; the relay says where.
    const refused = await runProcess(process.execPath, [CLI, "mcp", "--daemon", url, "--ca-file", certs.ca], {
      env: { ...fleet.env, HARNESS_MCP_TOKEN: token },
      stdin: "",
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^harness mcp: no answer from https:/);
  });
});
