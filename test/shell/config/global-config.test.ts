import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DAY, HOUR, MINUTE } from "../../../src/core/durations.js";
import { type ConfigError, formatConfigError } from "../../../src/shell/config/config-error.js";
import {
  type GlobalConfig,
  loadGlobalConfig,
  readGlobalConfig,
} from "../../../src/shell/config/global-config.js";
import { sandbox } from "./helpers.js";

const FILE = "/etc/harness/harness.toml";
const env = { HOME: "/home/ada", XDG_RUNTIME_DIR: "/run/user/1000" };

function load(text: string): GlobalConfig {
  const r = loadGlobalConfig(text, FILE, env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.config;
}

function errors(text: string): readonly ConfigError[] {
  const r = loadGlobalConfig(text, FILE, env);
  if (r.ok) throw new Error("expected the load to fail");
  return r.errors;
}

function onlyError(text: string): ConfigError {
  const all = errors(text);
  expect(all).toHaveLength(1);
  return all[0] as ConfigError;
}

describe("global config: defaults", () => {
  it("defaults with no file", async () => {
    const { env, root } = sandbox();
    const r = await readGlobalConfig(join(root, "config", "harness", "harness.toml"), env);
    expect(r.found).toBe(false);
    if (!r.ok) throw new Error("expected defaults");
    expect(r.warnings).toEqual([]);
    expect(r.config).toEqual({
      memory: {
        ruleMiners: [],
        miners: [],
        rules: { enforce: [], disable: [], shadowPeriod: 7 * DAY, journalRetention: 45 * DAY },
      },
      policyRepos: [],
      notify: {
        command: undefined,
        timeout: 15_000,
        cooldown: 15 * MINUTE,
        events: ["rule_fired", "rule_hold", "rule_hold_released"],
      },
      supervisor: { stop: undefined },
      server: {
        socket: join(root, "run", "harness.sock"),
        listen: undefined,
        metricsListen: { host: "127.0.0.1", port: 9464 },
        readTokenFile: undefined,
        metricsTokenFile: undefined,
        controlTokenFile: join(root, "config", "harness", "control.token"),
        harnessD: undefined,
        producers: {},
        tls: undefined,
      },
      agents: {
        listen: { host: "127.0.0.1", port: 7434 },
        onUnreachable: "allow",
        verifyPatterns: [],
        staleAfter: 12 * 3_600_000,
        tell: ["annotate", "notify"],
      },
      graph: { projectFileEdges: true },
      otel: undefined,
      client: {
        daemon: undefined,
        caFile: undefined,
        clientCertFile: undefined,
        clientKeyFile: undefined,
        readTokenFile: undefined,
        controlTokenFile: undefined,
      },
      store: undefined,
    } satisfies GlobalConfig);
  });

  it("an explicit config that does not exist cannot be read", async () => {
    const { env, root } = sandbox();
    const r = await readGlobalConfig(join(root, "missing.toml"), env, { required: true });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.code).toBe("read");
  });

  it("reads every engine key", () => {
    const c = load(`
[memory]
rule_miners = ["miner"]

[memory.rules]
enforce = ["restart-into-same-failure"]
disable = ["cross-run-churn"]
shadow_period = "0s"
journal_retention = "60d"

[policy_repo.ops]
remote = "git@forge.example:org/rules.git"
branch = "main"
credential_file = "ops.token"
reviewers = ["ada"]
labels = ["rules"]
public = false
branch_prefix = "rules/"
max_proposals_per_week = 0
bot_login = "harness-app[bot]"
commit_author = "Policy Bot <policy-bot@example.org>"

[policy_repo.ahead]
remote = "https://forge.example/org/more.git"

[notify]
command = ["/usr/local/bin/hook", "--quiet"]
timeout = "1s"
cooldown = "24h"
events = ["rule_fired"]

[supervisor]
stop = ["/usr/local/bin/harness", "stop"]

[server]
socket = "/run/h.sock"
listen = "[::1]:7443"
metrics_listen = ""
read_token_file = "/etc/harness/read.token"
control_token_file = "control.token"
harness_d = "harness.d"

[server.producers]
observer = "/etc/harness/observer.cred"
graph = "graph.cred"
`);
    expect(c.memory).toEqual({
      ruleMiners: ["miner"],
      miners: [],
      rules: {
        enforce: ["restart-into-same-failure"],
        disable: ["cross-run-churn"],
        shadowPeriod: 0,
        journalRetention: 60 * DAY,
      },
    });
    expect(c.policyRepos.map((r) => r.name)).toEqual(["ahead", "ops"]);
    expect(c.policyRepos[0]).toEqual({
      name: "ahead",
      remote: "https://forge.example/org/more.git",
      branch: undefined,
      credentialFile: undefined,
      reviewers: [],
      labels: [],
      public: true,
      publicUnset: true,
      branchPrefix: "harness-rules/",
      maxProposalsPerWeek: 3,
      botLogin: undefined,
      commitAuthor: undefined,
    });
    expect(c.policyRepos[1]).toMatchObject({
      branch: "main",
      credentialFile: "/etc/harness/ops.token",
      public: false,
      publicUnset: false,
      botLogin: "harness-app[bot]",
      commitAuthor: { name: "Policy Bot", email: "policy-bot@example.org" },
      branchPrefix: "rules/",
      maxProposalsPerWeek: 0,
    });
    expect(c.notify).toEqual({
      command: ["/usr/local/bin/hook", "--quiet"],
      timeout: 1_000,
      cooldown: 24 * HOUR,
      events: ["rule_fired"],
    });
    expect(c.supervisor.stop).toEqual(["/usr/local/bin/harness", "stop"]);
    expect(c.server).toEqual({
      socket: "/run/h.sock",
      listen: { host: "::1", port: 7443 },
      metricsListen: undefined,
      readTokenFile: "/etc/harness/read.token",
      controlTokenFile: "/etc/harness/control.token",
      harnessD: "/etc/harness/harness.d",
      producers: { observer: "/etc/harness/observer.cred", graph: "/etc/harness/graph.cred" },
    });
  });
});

describe("global config: unknown keys", () => {
  const cases: [string, string, string, string, number][] = [
    ["memory.rules", "enforse", '[memory.rules]\nenforse = ["x"]\n', "enforse", 2],
    ["memory", "rule_minors", '[memory]\nrule_minors = ["m"]\n', "rule_minors", 2],
    [
      "policy_repo.ops",
      "reviewer",
      '[policy_repo.ops]\nremote = "https://x/y.git"\nreviewer = ["a"]\n',
      "reviewer",
      3,
    ],
    ["notify", "timeout_s", "[notify]\ntimeout_s = 3\n", "timeout_s", 2],
    ["supervisor", "start", '[supervisor]\nstart = ["/bin/true"]\n', "start", 2],
    ["server", "listen_public", "[server]\nlisten_public = true\n", "listen_public", 2],
  ];
  for (const [table, key, text, expectedKey, line] of cases) {
    it(`unknown key in [${table}] fails naming file, table, key and line`, () => {
      const e = onlyError(`# harness\n${text}`);
      expect(e).toMatchObject({
        code: "unknown_key",
        file: FILE,
        table,
        key: expectedKey,
        line: line + 1,
        column: 1,
      });
      expect(formatConfigError(e)).toMatch(
        new RegExp(
          `^/etc/harness/harness\\.toml:${line + 1}:1: \\[${table.replace(".", "\\.")}\\] ${key}: unknown key`,
        ),
      );
    });
  }

  it("an unknown key in a dotted or inline form is still found, with its position", () => {
    const e = onlyError('memory.rules.enforse = ["x"]\nnotify = { timeout = "5s" }\n');
    expect(e).toMatchObject({ table: "memory.rules", key: "enforse", line: 1, column: 1 });
    const inline = onlyError("[memory]\nrules = { enforce = [], extra = 1 }\n");
    expect(inline).toMatchObject({ table: "memory.rules", key: "extra", line: 2, column: 25 });
  });

  it("reports every problem, in file order", () => {
    const all = errors('[notify]\nbogus = 1\ntimeout = "1h"\n[server]\nnope = 2\n');
    expect(all.map((e) => [e.table, e.key, e.line])).toEqual([
      ["notify", "bogus", 2],
      ["notify", "timeout", 3],
      ["server", "nope", 5],
    ]);
  });
});

describe("global config: tables of the supervisor", () => {
  it("supervisor tables left alone", () => {
    const c = load(`
title = "my fleet"

[harness.impl]
cmd = "claude"
anything = { goes = true }

[profile.work]
harnesses = ["impl"]

[memory.promotion]
weights_repo = "ops"

[project]
name = "reduit"
`);
    expect(c.memory.rules.enforce).toEqual([]);
  });

  it("an engine table of the wrong shape fails", () => {
    expect(onlyError('notify = "loud"\n')).toMatchObject({
      key: "notify",
      message: "must be a table",
      line: 1,
    });
    expect(onlyError("[[supervisor]]\n")).toMatchObject({ key: "supervisor", message: "must be a table" });
  });
});

describe("global config: values", () => {
  it("journal_retention below 37d refused", () => {
    const e = onlyError('[memory.rules]\njournal_retention = "36d"\n');
    expect(e).toMatchObject({
      code: "invalid_value",
      table: "memory.rules",
      key: "journal_retention",
      line: 2,
    });
    expect(e.message).toContain("at least 37d");
    expect(load('[memory.rules]\njournal_retention = "37d"\n').memory.rules.journalRetention).toBe(37 * DAY);
  });

  it("bad duration", () => {
    for (const bad of ['"7 days"', '"1w"', "7", '"-1h"', '""']) {
      const e = onlyError(`[memory.rules]\nshadow_period = ${bad}\n`);
      expect(e).toMatchObject({ code: "invalid_value", key: "shadow_period", line: 2 });
      expect(e.message).toContain("must be a duration");
    }
    expect(load('[memory.rules]\nshadow_period = "1h30m"\n').memory.rules.shadowPeriod).toBe(90 * MINUTE);
  });

  it("notify timeout and cooldown keep to their ranges", () => {
    expect(onlyError('[notify]\ntimeout = "500ms"\n').message).toContain("from 1s to 5m");
    expect(onlyError('[notify]\ntimeout = "6m"\n').message).toContain("from 1s to 5m");
    expect(onlyError('[notify]\ncooldown = "25h"\n').message).toContain("at most 1d");
    expect(load('[notify]\ncooldown = "0s"\n').notify.cooldown).toBe(0);
  });

  it("policy repo name pattern", () => {
    for (const name of ["Ops", "9ops", "ops_main", '"ops.main"', "-ops"]) {
      const e = onlyError(`[policy_repo.${name}]\nremote = "https://forge.example/r.git"\n`);
      expect(e).toMatchObject({ code: "invalid_value", table: "policy_repo", line: 1 });
      expect(e.message).toContain("^[a-z][a-z0-9-]*$");
    }
    expect(load('[policy_repo.ops-2]\nremote = "https://forge.example/r.git"\n').policyRepos[0]?.name).toBe(
      "ops-2",
    );
  });

  it("missing remote", () => {
    const e = onlyError('[policy_repo.ops]\nbranch = "main"\n');
    expect(e).toMatchObject({
      code: "missing_key",
      table: "policy_repo.ops",
      key: "remote",
      line: 1,
      column: 1,
    });
  });

  it("ext:: remote refused", () => {
    for (const remote of ["ext::sh -c touch% /tmp/pwned", "fd::3", "transport+x::addr"]) {
      const e = onlyError(`[policy_repo.evil]\nremote = "${remote}"\n`);
      expect(e).toMatchObject({ code: "invalid_value", table: "policy_repo.evil", key: "remote", line: 2 });
      expect(e.message).toContain("transport helper");
    }
    expect(onlyError('[policy_repo.evil]\nremote = "--upload-pack=touch /tmp/x"\n').key).toBe("remote");
    expect(
      load('[policy_repo.ops]\nremote = "ssh://git@forge.example:22/org/r.git"\n').policyRepos,
    ).toHaveLength(1);
  });

  it("refuses the remotes and branches policy sync would refuse, so config check and sync agree", () => {
    for (const [remote, why] of [
      ["http://forge.example/r.git", "scheme http"],
      ["policy/checkout", "a relative path"],
    ] as const) {
      const e = onlyError(`[policy_repo.ops]\nremote = "${remote}"\n`);
      expect(e).toMatchObject({ code: "invalid_value", key: "remote", line: 2 });
      expect(e.message).toContain(why);
    }
    const e = onlyError('[policy_repo.ops]\nremote = "/srv/r.git"\nbranch = "main:refs/heads/evil"\n');
    expect(e).toMatchObject({ code: "invalid_value", key: "branch", line: 3 });
    expect(load('[policy_repo.ops]\nremote = "git@forge.example:org/r.git"\n').policyRepos).toHaveLength(1);
  });

  it("policy repo keys are typed", () => {
    const all = errors(
      '[policy_repo.ops]\nremote = "https://x/r.git"\npublic = "yes"\nmax_proposals_per_week = -1\nlabels = [1]\n',
    );
    expect(all.map((e) => e.key)).toEqual(["public", "max_proposals_per_week", "labels"]);
  });

  it("a policy repo's forge is declared as github, gitea or gitlab; anything else is refused where it is written", () => {
    const base = '[policy_repo.ops]\nremote = "https://git.example.org/org/platform/policy.git"\n';
    expect(load(base).policyRepos[0]?.forge).toBeUndefined();
    for (const kind of ["github", "gitea", "gitlab"] as const)
      expect(load(`${base}forge = "${kind}"\n`).policyRepos[0]?.forge).toBe(kind);
    for (const bad of ['"GitLab"', '"forgejo"', '"bitbucket"', "1", '["gitlab"]']) {
      const e = onlyError(`${base}forge = ${bad}\n`);
      expect(e).toMatchObject({
        code: "invalid_value",
        file: FILE,
        table: "policy_repo.ops",
        key: "forge",
        line: 3,
        column: 1,
      });
      expect(formatConfigError(e)).toBe(
        `${FILE}:3:1: [policy_repo.ops] forge: must be one of "github", "gitea", "gitlab"`,
      );
    }
  });

  it("a declared forge may not contradict github.com or gitlab.com, nor be declared for a remote on no forge", () => {
    const repo = (remote: string, forge: string) =>
      `[policy_repo.ops]\nremote = ${JSON.stringify(remote)}\nforge = "${forge}"\n`;
    expect(load(repo("git@gitlab.com:org/platform/policy.git", "gitlab")).policyRepos[0]?.forge).toBe(
      "gitlab",
    );
    expect(load(repo("ssh://git@GitHub.com:22/org/policy.git", "github")).policyRepos[0]?.forge).toBe(
      "github",
    );
    expect(load(repo("https://git.example.org/org/policy.git", "gitea")).policyRepos[0]?.forge).toBe("gitea");
    for (const [remote, forge, host, known] of [
      ["https://github.com/org/policy.git", "gitlab", "github.com", "github"],
      ["git@github.com:org/policy.git", "gitea", "github.com", "github"],
      ["https://user@gitlab.com/org/sub/policy.git", "github", "gitlab.com", "gitlab"],
    ] as const) {
      const e = onlyError(repo(remote, forge));
      expect(e).toMatchObject({
        code: "invalid_value",
        table: "policy_repo.ops",
        key: "forge",
        line: 3,
        column: 1,
      });
      expect(e.message).toBe(`${host} is ${known}: declare forge = "${known}" or leave it unset`);
    }
    for (const remote of [
      "/srv/git/policy.git",
      "file:///srv/git/policy.git",
      "git://forge.example/org/policy.git",
    ])
      expect(onlyError(repo(remote, "gitlab"))).toMatchObject({
        key: "forge",
        message: "the remote is on no forge (https or ssh needed to declare one)",
      });
  });

  it("unknown producer source", () => {
    const e = onlyError('[server.producers]\nobserver = "/etc/o.cred"\ntick = "/etc/t.cred"\n');
    expect(e).toMatchObject({ code: "unknown_key", table: "server.producers", key: "tick", line: 3 });
    expect(e.message).toContain("observer, ledger, loopguard, graph, facts");
  });

  it("relative notify argv[0]", () => {
    const e = onlyError('[notify]\ncommand = ["notify-send", "harness"]\n');
    expect(e).toMatchObject({ code: "invalid_value", table: "notify", key: "command", line: 2 });
    expect(e.message).toContain("absolute");
    expect(onlyError("[notify]\ncommand = []\n").key).toBe("command");
    expect(onlyError('[supervisor]\nstop = ["./stop.sh"]\n')).toMatchObject({
      table: "supervisor",
      key: "stop",
    });
  });

  it("listen addresses: host:port, a warning off loopback", () => {
    const r = loadGlobalConfig(
      '[server]\nlisten = "0.0.0.0:7443"\nmetrics_listen = "localhost:9100"\ntls_cert_file = "/etc/harness/tls/server.pem"\ntls_key_file = "/etc/harness/tls/server.key"\n',
      FILE,
      env,
    );
    if (!r.ok) throw new Error("expected ok");
    expect(r.config.server.listen).toEqual({ host: "0.0.0.0", port: 7443 });
    expect(r.config.server.metricsListen).toEqual({ host: "localhost", port: 9100 });
    expect(r.warnings).toEqual([expect.objectContaining({ code: "public_listen", key: "listen", line: 2 })]);
    for (const bad of ['"7443"', '"host:99999"', '"::1:80"', "7443"]) {
      expect(onlyError(`[server]\nlisten = ${bad}\n`).key).toBe("listen");
    }
  });

  it("a metrics listener off loopback needs TLS, or (deprecated) metrics_token_file", () => {
    const e = onlyError('[server]\nmetrics_listen = "0.0.0.0:9464"\n');
    expect(e).toMatchObject({ code: "invalid_value", key: "metrics_listen", line: 2 });
    expect(e.message).toContain(
      "needs TLS ([server] tls_cert_file and tls_key_file) or, deprecated, [server] metrics_token_file",
    );
    const r = loadGlobalConfig(
      '[server]\nmetrics_listen = "0.0.0.0:9464"\nmetrics_token_file = "/etc/harness/metrics.token"\n',
      FILE,
      env,
    );
    if (!r.ok) throw new Error("a token file makes it acceptable");
    expect(r.config.server.metricsTokenFile).toBe("/etc/harness/metrics.token");
    expect(r.warnings).toContainEqual(
      expect.objectContaining({ code: "deprecated", key: "metrics_listen", line: 2, file: FILE }),
    );
  });

  it("A plaintext non-loopback listener is refused", () => {
    for (const [table, key] of [
      ["server", "listen"],
      ["agents", "listen"],
    ] as const) {
      const e = onlyError(`[${table}]\n${key} = "192.0.2.7:7443"\n`);
      expect(e).toMatchObject({ code: "invalid_value", file: FILE, table, key, line: 2, column: 1 });
      expect(formatConfigError(e)).toBe(
        `${FILE}:2:1: [${table}] listen: 192.0.2.7 is not a loopback address: a plaintext listener there would carry tokens and rows in the clear; set [server] tls_cert_file and tls_key_file, or listen on loopback`,
      );
    }
    // Loopback stays plaintext; TLS lets every listener off loopback.
    expect(loadGlobalConfig('[server]\nlisten = "127.0.0.1:7443"\n', FILE, env).ok).toBe(true);
    const tls = loadGlobalConfig(
      '[server]\nlisten = "192.0.2.7:7443"\nmetrics_listen = "192.0.2.7:9464"\ntls_cert_file = "tls/server.pem"\ntls_key_file = "tls/server.key"\nclient_ca_file = "tls/ca.pem"\n[agents]\nlisten = "192.0.2.7:7434"\n',
      FILE,
      env,
    );
    if (!tls.ok) throw new Error(`expected ok: ${JSON.stringify(tls.errors)}`);
    expect(tls.config.server.tls).toEqual({
      certFile: "/etc/harness/tls/server.pem",
      keyFile: "/etc/harness/tls/server.key",
      clientCaFile: "/etc/harness/tls/ca.pem",
    });
  });

  it("the TLS keys go together: a certificate needs its key, a client CA needs both", () => {
    expect(onlyError('[server]\ntls_cert_file = "a.pem"\n')).toMatchObject({
      code: "missing_key",
      key: "tls_key_file",
    });
    expect(onlyError('[server]\ntls_key_file = "a.key"\n')).toMatchObject({
      code: "missing_key",
      key: "tls_cert_file",
    });
    expect(onlyError('[server]\nclient_ca_file = "ca.pem"\n')).toMatchObject({
      code: "invalid_value",
      key: "client_ca_file",
      line: 2,
    });
  });

  it("a TOML syntax error reports line and column", () => {
    const e = onlyError('[notify]\ntimeout = "15s"\ncooldown = \n');
    expect(e).toMatchObject({ code: "syntax", file: FILE, line: 3, column: 12 });
    expect(formatConfigError(e)).toMatch(/^\/etc\/harness\/harness\.toml:3:12: invalid TOML: /);
  });

  it("hostile input comes back as errors, never as a throw", () => {
    expect(errors("[notify]\n__proto__ = 1\n")[0]).toMatchObject({ key: "__proto__", code: "unknown_key" });
    expect(errors(`a = ${"[".repeat(2000)}${"]".repeat(2000)}\n`)[0]?.code).toBe("syntax");
    expect(errors("[notify]\nx = 99999999999999999999\n")[0]?.code).toBe("syntax");
    expect(errors("[server]\nsocket = 1\nsocket = 2\n")[0]?.code).toBe("syntax");
  });

  it("invalid UTF-8 is a syntax error", async () => {
    const { env, write } = sandbox();
    const file = write("bad.toml", "");
    writeFileSync(file, Buffer.from([0x5b, 0x6e, 0x5d, 0x0a, 0x78, 0x3d, 0x22, 0xff, 0x22, 0x0a]));
    const r = await readGlobalConfig(file, env);
    expect(r.ok ? undefined : r.errors[0]?.code).toBe("syntax");
  });
});

describe("global config: [memory.miners]", () => {
  it("reads a miner's one-shot command and timeout (30m by default)", () => {
    const c = load(`[memory]
rule_miners = ["miner", "second"]
[memory.miners.miner]
command = ["/usr/bin/claude", "-p", "--mcp-config", "{mcp_config}"]
timeout = "10m"
[memory.miners.second]
command = ["/usr/bin/codex", "exec", "-"]
prompt_file = "/etc/harness/miner-prompt.md"
`);
    expect(c.memory.miners).toEqual([
      {
        name: "miner",
        command: ["/usr/bin/claude", "-p", "--mcp-config", "{mcp_config}"],
        timeout: 10 * 60_000,
      },
      {
        name: "second",
        command: ["/usr/bin/codex", "exec", "-"],
        timeout: 30 * 60_000,
        promptFile: "/etc/harness/miner-prompt.md",
      },
    ]);
  });

  it("refuses a miner not in rule_miners, a relative command, a missing one and an unknown key", () => {
    expect(onlyError('[memory.miners.x]\ncommand = ["/bin/true"]\n').message).toMatch(
      /x is not listed in \[memory\] rule_miners/,
    );
    expect(
      onlyError('[memory]\nrule_miners = ["x"]\n[memory.miners.x]\ncommand = ["claude"]\n').message,
    ).toMatch(/argv\[0\] must be an absolute path/);
    expect(onlyError('[memory]\nrule_miners = ["x"]\n[memory.miners.x]\ntimeout = "5m"\n').message).toMatch(
      /a miner needs the command/,
    );
    expect(
      onlyError('[memory]\nrule_miners = ["x"]\n[memory.miners.x]\ncommand = ["/bin/true"]\nprompt = "p"\n')
        .message,
    ).toMatch(/unknown key/);
  });
});

describe("global config: enforce pins", () => {
  it("enforce takes names and NAME@HASH pins", () => {
    const pin = `first-hold@${"c".repeat(64)}`;
    expect(load(`[memory.rules]\nenforce = ["a", "${pin}"]\n`).memory.rules.enforce).toEqual(["a", pin]);
  });

  it("a malformed pin fails naming file, key, line and column", () => {
    const e = onlyError('# pins\n[memory.rules]\n  enforce = ["first-hold@3f2a"]\n');
    expect(e).toMatchObject({
      code: "invalid_value",
      file: FILE,
      table: "memory.rules",
      key: "enforce",
      line: 3,
      column: 3,
    });
    expect(formatConfigError(e)).toMatch(
      /^\/etc\/harness\/harness\.toml:3:3: \[memory\.rules\] enforce: .*NAME@HASH/,
    );
  });
});

describe("global config: [client] (decision 0018)", () => {
  it("the daemon the CLI reaches by default, with its TLS and token files", () => {
    const c = load(
      '[client]\ndaemon = "https://rules.example:7443/x"\nca_file = "/etc/h/ca.pem"\nclient_cert_file = "/etc/h/me.pem"\nclient_key_file = "/etc/h/me.key"\nread_token_file = "/etc/h/read.token"\ncontrol_token_file = "/etc/h/me.token"\n',
    );
    expect(c.client).toEqual({
      daemon: "https://rules.example:7443",
      caFile: "/etc/h/ca.pem",
      clientCertFile: "/etc/h/me.pem",
      clientKeyFile: "/etc/h/me.key",
      readTokenFile: "/etc/h/read.token",
      controlTokenFile: "/etc/h/me.token",
    });
  });

  it("a plaintext daemon URL, a certificate without its key and an unknown key are refused with their place", () => {
    const plain = onlyError('[client]\ndaemon = "http://rules.example:7443"\n');
    expect(plain).toMatchObject({
      code: "invalid_value",
      table: "client",
      key: "daemon",
      line: 2,
      column: 1,
    });
    expect(plain.message).toMatch(/over https only/);
    expect(onlyError('[client]\nclient_cert_file = "/me.pem"\n')).toMatchObject({
      code: "missing_key",
      table: "client",
      key: "client_cert_file",
    });
    expect(onlyError('[client]\ntarget = "https://x:1"\n')).toMatchObject({ table: "client", key: "target" });
  });
});
