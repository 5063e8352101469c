/**
 * Remote agents (issue 32 item 2, decision 0017): a "laptop" (its own homes, no control token, no
 * daemon socket) enrols with a one-time code over the daemon's RPC listener and installs hooks with
 * `--daemon https://127.0.0.1:PORT --ca-file CA`, which post to the daemon's hook endpoint over TLS. The
 * installed commands are driven with real payloads of both agents; the rows carry the git facts the
 * forwarder computed on the laptop (the daemon runs no git for a call over TLS) and the laptop's clock.
 * The daemon stopped, calls spool; restarted, they are delivered in order, nothing lost.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellWord, shellWords } from "../../../src/shell/support/shell-word.js";
import { makeHomes } from "../../support/homes.js";
import {
  driveInstalledHook,
  installedCommand,
  installedHandlers,
  runInstalledCommand,
} from "../../support/installed-hook.js";
import { journalPeers } from "../../support/store-reads.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";
import { CLI, freePort, runProcess, TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf } from "./hook-harness.js";
import { claudeCode, codex, SECRET_TEXT } from "./payloads.js";

let certs: TestCerts;
let fleet: TestFleet;
let repo: string;
let hooksUrl: string;
let rpcUrl: string;

beforeAll(async () => {
  certs = makeTestCerts();
  repo = makeRepo();
  const port = await freePort();
  hooksUrl = `https://127.0.0.1:${port}`;
  fleet = new TestFleet({
    config: `[agents]\nlisten = "127.0.0.1:${port}"`,
    server: [
      'listen = "127.0.0.1:0"',
      `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
      `tls_key_file = ${JSON.stringify(certs.server.key)}`,
    ],
  });
  rpcUrl = rpcOf(await fleet.start());
}, 60_000);

afterAll(async () => {
  await fleet.dispose();
  certs.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

/** The RPC listener's URL from the daemon's start line. */
function rpcOf(stderr: string): string {
  const m = /rpc (https:\/\/[^\s,]+)/.exec(stderr);
  if (m === null) throw new Error(`no TLS start line in: ${stderr}`);
  return m[1] as string;
}

/** A laptop: homes of its own, no control token, and no socket of the daemon's in them. */
function laptop(name: string) {
  const root = path.join(fleet.root, name);
  const env = makeHomes(root);
  const project = path.join(root, "project");
  fs.mkdirSync(project, { mode: 0o700 });
  return {
    env,
    project,
    cli: (args: readonly string[]) => runProcess(process.execPath, [CLI, ...args], { env }),
  };
}

async function enrolmentCode(harness: string): Promise<string> {
  const r = await fleet.cli(["token", "create", "--enrol", "--harness", harness, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  const { id, token } = JSON.parse(r.stdout) as { id: string; token: string };
  const file = path.join(fleet.root, `${id}.code`);
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

type Laptop = ReturnType<typeof laptop>;

const installRemote = async (m: Laptop, agent: string, harness: string, extra: readonly string[] = []) =>
  m.cli([
    "agents",
    "install",
    agent,
    "--harness",
    harness,
    "--project",
    m.project,
    "--daemon",
    hooksUrl,
    "--ca-file",
    certs.ca,
    "--rpc",
    rpcUrl,
    "--enrol-file",
    await enrolmentCode(harness),
    "--json",
    ...extra,
  ]);

/** The events a settings file has hooks for. */
const installedEvents = (file: string): string[] =>
  Object.keys((JSON.parse(fs.readFileSync(file, "utf8")) as { hooks: Record<string, unknown> }).hooks);

/** Doctor's agents row on a laptop (its daemon row fails there: it has no local daemon). */
async function doctorAgents(m: Laptop): Promise<{ status: string; message: string }[]> {
  const r = await m.cli(["doctor", "--json"]);
  const checks = (
    JSON.parse(r.stdout) as { checks: { name: string; findings: { status: string; message: string }[] }[] }
  ).checks;
  return checks.find((c) => c.name === "agents")?.findings ?? [];
}

const spoolDir = (m: Laptop) => path.join(m.env.XDG_STATE_HOME, "harness", "agents", "spool");
const waiting = (m: Laptop) =>
  fs.existsSync(spoolDir(m)) ? fs.readdirSync(spoolDir(m)).filter((f) => f.endsWith(".json")) : [];

describe("Remote agents over TLS", () => {
  let cc: Laptop;
  beforeAll(() => {
    cc = laptop("laptop-cc");
  });
  const settings = () => path.join(cc.project, ".claude", "settings.local.json");

  it("install --daemon writes command hooks that post over TLS; no token in the settings file", async () => {
    const r = await installRemote(cc, "claude-code", "laptop");
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      mode: string;
      daemon: string;
      client: string;
      tokens: Record<string, { file: string }>;
      notes: string[];
    };
    expect(report).toMatchObject({ mode: "command", daemon: hooksUrl, client: "node" });
    expect(report.notes.join("\n")).toMatch(/git facts .* are computed on this machine/);
    const text = fs.readFileSync(settings(), "utf8");
    for (const t of Object.values(report.tokens)) {
      expect(fs.statSync(t.file).mode & 0o777).toBe(0o600);
      expect(text).not.toContain(fs.readFileSync(t.file, "utf8").trim());
    }
    const words = shellWords(installedHandlers(settings(), "PreToolUse")[0]?.command as string) ?? [];
    expect(words.slice(words.indexOf("--daemon"))).toEqual(["--daemon", hooksUrl, "--ca-file", certs.ca]);
    expect(words).not.toContain("--socket");
  });

  it("a second agent of the same harness on the laptop uses the tokens it holds, with no control token", async () => {
    const r = await cc.cli([
      "agents",
      "install",
      "codex",
      "--harness",
      "laptop",
      "--project",
      cc.project,
      "--daemon",
      hooksUrl,
      "--ca-file",
      certs.ca,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { tokens: Record<string, { minted: boolean }> };
    expect(Object.values(report.tokens).map((t) => t.minted)).toEqual([false, false]);
    const ran = await driveInstalledHook(
      path.join(cc.project, ".codex", "hooks.json"),
      "SessionStart",
      "laptop",
      codex(repo, "remote-cx-same").SessionStart,
      cc.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    await fleet.until(() => rowsOf(fleet, "remote-cx-same").length === 1, "the second agent's row");
  });

  it("uninstall knows the remote hooks as ours", async () => {
    const r = await cc.cli([
      "agents",
      "uninstall",
      "claude-code",
      "--harness",
      "laptop",
      "--project",
      cc.project,
      "--dry-run",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ removed: installedEvents(settings()).length });
    expect(installedEvents(settings()).length).toBeGreaterThan(5);
  });

  it("doctor names the remote daemon and whether its hook endpoint answers", async () => {
    const findings = await doctorAgents(cc);
    expect(findings).toContainEqual({
      status: "pass",
      message: expect.stringContaining(`posting to ${hooksUrl}`),
    });
    expect(findings).toContainEqual({
      status: "pass",
      message: `claude-code for laptop: ${hooksUrl} answers the hook endpoint's challenge over TLS`,
    });
    // `harness agents status` is the same row, alone.
    const status = await cc.cli(["agents", "status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${hooksUrl} answers the hook endpoint's challenge over TLS`);
  });

  it("Claude Code's installed hooks: rows with the facts the forwarder computed and the laptop's clock", async () => {
    const p = claudeCode(repo, "remote-cc-1");
    const before = Date.now();
    for (const event of ["SessionStart", "PreToolUse", "PostToolUse"] as const) {
      const ran = await driveInstalledHook(settings(), event, "laptop", p[event], cc.env);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stderr).toBe("");
    }
    await fleet.until(() => rowsOf(fleet, "remote-cc-1").length === 2, "the opened and tool rows");
    const rows = rowsOf(fleet, "remote-cc-1");
    expect(rows.map((r) => r.type)).toEqual(["opened", "tool"]);
    for (const r of rows) {
      expect(r.event).toMatchObject({
        harness: "laptop",
        repo: "forge.example/org/reduit",
        branch: "feature",
      });
      // The event's `at` is the laptop's clock when the hook ran: data beside the row's own time.
      const at = r.event.at as number;
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(Date.now());
      expect(r.raw).not.toContain(SECRET_TEXT);
    }
    expect(rows[1]?.event.paths).toEqual(["src/a.ts"]);
  });

  it("Codex's installed hooks: the same, from a patch's paths", async () => {
    const cx = laptop("laptop-cx");
    const r = await installRemote(cx, "codex", "runner");
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(cx.project, ".codex", "hooks.json");
    const p = codex(repo, "remote-cx-1");
    for (const event of ["SessionStart", "PostToolUse"] as const) {
      const ran = await driveInstalledHook(file, event, "runner", p[event], cx.env);
      expect(ran.code, ran.stderr).toBe(0);
    }
    await fleet.until(() => rowsOf(fleet, "remote-cx-1").length === 2, "codex's rows");
    const [opened, tool] = rowsOf(fleet, "remote-cx-1");
    expect(opened?.event).toMatchObject({ harness: "runner", repo: "forge.example/org/reduit" });
    expect(tool?.event).toMatchObject({ branch: "feature", paths: ["src/a.ts", "src/new.ts"] });
  });

  it("a call over TLS without facts gets none: the daemon runs no git on a remote caller's path", async () => {
    const token = (role: string) =>
      fs
        .readFileSync(
          path.join(cc.env.XDG_STATE_HOME, "harness", "agents", "laptop", `${role}.token`),
          "utf8",
        )
        .trim();
    const res = await fetchOverTls(
      `${hooksUrl}/hooks/claude-code?harness=laptop`,
      JSON.stringify(claudeCode(repo, "remote-bare").SessionStart),
      { authorization: `Bearer ${token("observer")}`, "x-harness-ledger-token": token("ledger") },
    );
    expect(res).toBe(200);
    await fleet.until(() => rowsOf(fleet, "remote-bare").length === 1, "the bare row");
    const event = rowsOf(fleet, "remote-bare")[0]?.event ?? {};
    expect(event.repo).toBeUndefined();
    expect(event.branch).toBeUndefined();
  });

  it("The daemon stopped: calls spool; restarted: replayed in order, nothing lost", async () => {
    const p = claudeCode(repo, "remote-cc-2");
    await fleet.stop();
    for (const event of ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure"] as const) {
      const ran = await driveInstalledHook(settings(), event, "laptop", p[event], cc.env);
      expect(ran.code).toBe(0);
      expect(ran.stderr).toMatch(/cannot be reached at https:\/\/127\.0\.0\.1:\d+.*waits in/);
    }
    expect(waiting(cc)).toHaveLength(4);
    expect(await doctorAgents(cc)).toContainEqual({
      status: "warn",
      message: expect.stringMatching(
        /^claude-code for laptop: no answer from https:.*its calls wait in the spool until it answers$/,
      ),
    });
    const spooled = JSON.parse(fs.readFileSync(path.join(spoolDir(cc), waiting(cc)[0] as string), "utf8"));
    expect(spooled).toMatchObject({
      daemon: { url: hooksUrl, ca_file: certs.ca },
      facts: { repo: "forge.example/org/reduit" },
    });
    rpcUrl = rpcOf(await fleet.start());
    const ran = await driveInstalledHook(settings(), "Stop", "laptop", p.Stop, cc.env);
    expect(ran.code, ran.stderr).toBe(0);
    await fleet.until(() => rowsOf(fleet, "remote-cc-2").length === 5, "the spooled rows and the live one");
    const rows = rowsOf(fleet, "remote-cc-2");
    expect(rows.map((r) => [r.type, r.event.mark ?? r.event.action ?? null])).toEqual([
      ["opened", null],
      ["mark", "user-message"],
      ["tool", "edit"],
      ["tool", "verify"],
      ["mark", "turn-end"],
    ]);
    // Spooled rows kept the facts computed when each call was made.
    expect(rows[2]?.event).toMatchObject({ repo: "forge.example/org/reduit", paths: ["src/a.ts"] });
    expect(waiting(cc)).toEqual([]);
  });

  it("A hook trusting another CA is refused by the handshake: nothing admitted, the call waits", async () => {
    const command = installedCommand(settings(), "SessionStart", "laptop").replace(
      shellWord(certs.ca),
      shellWord(certs.otherCa),
    );
    const ran = await runInstalledCommand(command, claudeCode(repo, "remote-wrong-ca").SessionStart, cc.env);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(
      /cannot be reached at https:\/\/127\.0\.0\.1:\d+ \(.*(CERT|SELF_SIGNED|UNABLE_TO).*\)/,
    );
    expect(waiting(cc)).toHaveLength(1);
    expect(rowsOf(fleet, "remote-wrong-ca")).toEqual([]);
    // A call spooled for another daemon, which is down, holds up no call to this one.
    const elsewhere = runInstalledCommand(
      command
        .replace(shellWord(hooksUrl), shellWord("https://127.0.0.1:1"))
        .replace(shellWord(certs.otherCa), shellWord(certs.ca)),
      claudeCode(repo, "remote-elsewhere").SessionStart,
      cc.env,
    );
    expect((await elsewhere).stderr).toMatch(/cannot be reached at https:\/\/127\.0\.0\.1:1 /);
    expect(waiting(cc)).toHaveLength(2);
    // The hook as installed (the right CA) delivers the call spooled with the wrong one: the call
    // goes with the installed hook's TLS files; the other daemon's call stays.
    const fixed = await driveInstalledHook(
      settings(),
      "SessionStart",
      "laptop",
      claudeCode(repo, "remote-fixed").SessionStart,
      cc.env,
    );
    expect(fixed.code, fixed.stderr).toBe(0);
    await fleet.until(
      () => rowsOf(fleet, "remote-wrong-ca").length === 1 && rowsOf(fleet, "remote-fixed").length === 1,
      "the call spooled with the wrong CA, then the live one",
    );
    expect(waiting(cc)).toHaveLength(1);
    for (const f of waiting(cc)) fs.rmSync(path.join(spoolDir(cc), f));
  });

  it("a call spooled for a daemon that never answers (a host gone off the network) holds up no call to this one and spends no try", async () => {
    // Accepts, never answers: what a powered-off or firewalled host looks like through a NAT or proxy.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const command = installedCommand(settings(), "SessionStart", "laptop").replace(
        shellWord(hooksUrl),
        shellWord(url),
      );
      const spooled = await runInstalledCommand(
        command,
        claudeCode(repo, "remote-silent").SessionStart,
        cc.env,
      );
      expect(spooled.stderr).toMatch(/cannot be reached at https:\/\/127\.0\.0\.1:\d+/);
      expect(waiting(cc)).toHaveLength(1);
      // More calls than an entry's tries: each passes the silent daemon's entry over and is delivered.
      for (let i = 0; i < 4; i++) {
        const ran = await driveInstalledHook(
          settings(),
          "SessionStart",
          "laptop",
          claudeCode(repo, `remote-past-silent-${i}`).SessionStart,
          cc.env,
        );
        expect(ran).toMatchObject({ code: 0, stderr: "" });
        await fleet.until(() => rowsOf(fleet, `remote-past-silent-${i}`).length === 1, `call ${i}'s row`);
      }
      // The silent daemon's call still waits for it, none of its tries spent: nothing set aside.
      expect(waiting(cc)).toHaveLength(1);
      const setAside = path.join(spoolDir(cc), "set-aside");
      expect(fs.existsSync(setAside) ? fs.readdirSync(setAside) : []).toEqual([]);
      for (const f of waiting(cc)) fs.rmSync(path.join(spoolDir(cc), f));
    } finally {
      silent.close();
    }
  });

  it("A daemon certificate from another CA is refused at install, and nothing is written", async () => {
    const m = laptop("laptop-wrong-ca");
    const r = await m.cli([
      "agents",
      "install",
      "claude-code",
      "--harness",
      "wrong",
      "--project",
      m.project,
      "--daemon",
      hooksUrl,
      "--ca-file",
      certs.otherCa,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed .*nothing was written/);
    expect(fs.existsSync(path.join(m.project, ".claude"))).toBe(false);
  });

  it("A plaintext http daemon URL is refused at install", async () => {
    const m = laptop("laptop-plain");
    const r = await m.cli([
      "agents",
      "install",
      "claude-code",
      "--harness",
      "plain",
      "--project",
      m.project,
      "--daemon",
      hooksUrl.replace("https:", "http:"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/over https only \(a token must never cross the network in plaintext\)/);
    expect(fs.existsSync(path.join(m.project, ".claude"))).toBe(false);
  });

  it("http mode to a remote daemon: tokens from allowedEnvVars, and what it loses said plainly", async () => {
    const m = laptop("laptop-http");
    const r = await installRemote(m, "claude-code", "webby", ["--mode", "http"]);
    expect(r.code, r.stderr).toBe(0);
    const notes = (JSON.parse(r.stdout) as { notes: string[] }).notes.join("\n");
    expect(notes).toMatch(/loses the git facts.*no repo, branch or paths.*no collision rule/);
    expect(notes).toMatch(/HARNESS_WEBBY_OBSERVER_TOKEN and HARNESS_WEBBY_LEDGER_TOKEN/);
    const handler = installedHandlers(
      path.join(m.project, ".claude", "settings.local.json"),
      "PreToolUse",
    )[0];
    expect(handler).toMatchObject({
      type: "http",
      url: `${hooksUrl}/hooks/claude-code?harness=webby`,
      headers: {
        Authorization: "Bearer $HARNESS_WEBBY_OBSERVER_TOKEN",
        "X-Harness-Ledger-Token": "$HARNESS_WEBBY_LEDGER_TOKEN",
      },
      allowedEnvVars: ["HARNESS_WEBBY_OBSERVER_TOKEN", "HARNESS_WEBBY_LEDGER_TOKEN"],
    });
    const tokenFile = path.join(m.env.XDG_STATE_HOME, "harness", "agents", "webby", "observer.token");
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(m.project, ".claude", "settings.local.json"), "utf8")).not.toContain(
      fs.readFileSync(tokenFile, "utf8").trim(),
    );
  });
});

describe("Remote agents over mutual TLS", () => {
  let mfleet: TestFleet;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    url = `https://127.0.0.1:${port}`;
    mfleet = new TestFleet({
      config: `[agents]\nlisten = "127.0.0.1:${port}"`,
      server: [
        `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
        `tls_key_file = ${JSON.stringify(certs.server.key)}`,
        `client_ca_file = ${JSON.stringify(certs.ca)}`,
      ],
    });
    await mfleet.start();
    fs.chmodSync(certs.client.key, 0o600);
  }, 60_000);
  afterAll(() => mfleet.dispose());

  it("the hook presents its client certificate; without one, install is refused", async () => {
    // Tokens minted by the operator over the daemon's socket (the operator's own machine, here).
    const env = { ...mfleet.env };
    const project = path.join(mfleet.root, "project");
    fs.mkdirSync(project);
    const install = (extra: readonly string[]) =>
      runProcess(
        process.execPath,
        [
          CLI,
          "agents",
          "install",
          "claude-code",
          "--harness",
          "mtls",
          "--project",
          project,
          "--socket",
          mfleet.socketPath,
          "--daemon",
          url,
          "--ca-file",
          certs.ca,
          ...extra,
        ],
        { env },
      );
    const refused = await install([]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/TLS handshake|no answer from/);
    const r = await install(["--client-cert", certs.client.cert, "--client-key", certs.client.key]);
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(project, ".claude", "settings.local.json");
    const ran = await driveInstalledHook(
      file,
      "SessionStart",
      "mtls",
      claudeCode(repo, "remote-mtls").SessionStart,
      env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toBe("");
    await mfleet.until(() => rowsOf(mfleet, "remote-mtls").length === 1, "the row over mutual TLS");
    expect(rowsOf(mfleet, "remote-mtls")[0]?.event).toMatchObject({
      repo: "forge.example/org/reduit",
      branch: "feature",
    });
    // The machine's certificate is recorded beside the row, as an Append's is, never in its event.
    const row = rowsOf(mfleet, "remote-mtls")[0];
    expect(journalPeers(mfleet, { kind: "run_event" }).find((p) => p.seq === row?.seq)).toMatchObject({
      peerName: "laptop-1",
      peerFingerprint: certs.client.sha256,
    });
    expect(row?.raw).not.toContain("laptop-1");
  });
});

/** A POST over TLS trusting the test CA: its status. */
async function fetchOverTls(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const https = await import("node:https");
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: "POST", ca: fs.readFileSync(certs.ca), headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}
