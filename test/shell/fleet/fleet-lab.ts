/**
 * A team's fleet on one machine (issue 32): the rules daemon in a server namespace with TLS on its own
 * address, and laptops in namespaces of their own (test/support/netns.ts), each with a clone of the same
 * repository, enrolling with one-time codes and installing Claude Code's hooks with `harness agents
 * install --daemon https://…`, driven as Claude Code runs them, from inside the laptop's namespace.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { driveInstalledHook, type HookRun } from "../../support/installed-hook.js";
import { type Lab, type Laptop, makeLab, NETNS_AVAILABLE, SERVER_ADDRESS } from "../../support/netns.js";
import { makeTestCerts, type TestCerts } from "../../support/test-certs.js";
import { makeRepo } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { CLI, type CliResult, type FleetOptions, TestFleet } from "../daemon-harness.js";

/** On CI the namespaces must run (CI is root and installs iproute2); elsewhere, without root, they skip. */
export const RUN_NETNS = NETNS_AVAILABLE || process.env.CI !== undefined;

export interface Machine {
  readonly laptop: Laptop;
  /** This laptop's clone: another path than every other laptop's, the same origin and branch. */
  readonly repo: string;
  /** The project directories agents were installed in, by harness. */
  readonly projects: Map<string, string>;
}

export class FleetLab {
  private constructor(
    private readonly lab: Lab,
    private readonly certs: TestCerts,
    readonly fleet: TestFleet,
    /** The hook endpoint's origin, `https://10.77.0.1:PORT`. */
    readonly hooks: string,
    /** The RPC listener's URL. */
    readonly rpc: string,
    readonly machines: readonly Machine[],
  ) {}

  /** Starts the daemon in the server namespace, `options`' rules and enforce beside the starter pack. */
  static async start(
    laptops: number,
    options: Pick<FleetOptions, "rules" | "enforce"> = {},
  ): Promise<FleetLab> {
    const lab = makeLab(laptops);
    const made: { certs?: TestCerts; fleet?: TestFleet } = {};
    try {
      const certs = makeTestCerts([SERVER_ADDRESS]);
      made.certs = certs;
      const fleet = new TestFleet({
        ...options,
        netns: lab.server,
        config: `[agents]\nlisten = "${SERVER_ADDRESS}:0"`,
        server: [
          `listen = "${SERVER_ADDRESS}:0"`,
          `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
          `tls_key_file = ${JSON.stringify(certs.server.key)}`,
        ],
      });
      made.fleet = fleet;
      const started = await fleet.start();
      const rpc = /rpc (https:\/\/[^\s,]+)/.exec(started)?.[1];
      const hooks = /hooks (https:\/\/[^\s/,]+)/.exec(started)?.[1];
      if (rpc === undefined || hooks === undefined) throw new Error(`no TLS listeners in: ${started}`);
      const machines = lab.laptops.map((laptop) => ({ laptop, repo: makeRepo(), projects: new Map() }));
      return new FleetLab(lab, certs, fleet, hooks, rpc, machines);
    } catch (e) {
      await made.fleet?.dispose();
      made.certs?.dispose();
      lab.dispose();
      throw e;
    }
  }

  async dispose(): Promise<void> {
    await this.fleet.dispose();
    this.certs.dispose();
    this.lab.dispose();
    for (const m of this.machines) fs.rmSync(m.repo, { recursive: true, force: true });
  }

  /** The built `harness` CLI on `m`'s laptop. */
  cli(m: Machine, args: readonly string[]): Promise<CliResult> {
    return m.laptop.run(process.execPath, [CLI, ...args]);
  }

  /** A one-time enrolment code for `harness`, made by the operator and handed to `m` in a file. */
  async enrolmentCode(m: Machine, harness: string, ttl = "1h"): Promise<string> {
    const r = await this.fleet.cli([
      "token",
      "create",
      "--enrol",
      "--harness",
      harness,
      "--ttl",
      ttl,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const { id, token } = JSON.parse(r.stdout) as { id: string; token: string };
    const file = path.join(m.laptop.root, `${id}.code`);
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return file;
  }

  /** `harness agents install claude-code --daemon …` on `m`, enrolling with `code`. */
  async install(
    m: Machine,
    harness: string,
    code: string,
    extra: readonly string[] = [],
  ): Promise<CliResult> {
    const project = path.join(m.laptop.root, `project-${harness}`);
    fs.mkdirSync(project, { recursive: true });
    const r = await this.cli(m, [
      "agents",
      "install",
      "claude-code",
      "--harness",
      harness,
      "--project",
      project,
      "--daemon",
      this.hooks,
      "--ca-file",
      this.certs.ca,
      "--rpc",
      this.rpc,
      "--enrol-file",
      code,
      "--json",
      ...extra,
    ]);
    if (r.code === 0) (m.projects as Map<string, string>).set(harness, project);
    return r;
  }

  /** Runs `harness`'s installed hook for `event` on `m`'s laptop, inside its namespace. */
  hook(m: Machine, harness: string, event: string, payload: unknown): Promise<HookRun> {
    return driveInstalledHook(
      path.join(m.projects.get(harness) as string, ".claude", "settings.local.json"),
      event,
      harness,
      payload,
      m.laptop.env,
      ["ip", "netns", "exec", m.laptop.ns],
    );
  }
}

/** Claude Code's events for session `id` working in `m`'s clone. */
export const events = (m: Machine, id: string) => claudeCode(m.repo, id);

/** The PostToolUse of session `id`'s edit `n` of `file` (repo-relative). */
export function edit(m: Machine, id: string, file: string, n: number) {
  const p = events(m, id).PostToolUse;
  const abs = `${m.repo}/${file}`;
  return {
    ...p,
    tool_input: { ...p.tool_input, file_path: abs },
    tool_response: { ...p.tool_response, filePath: abs },
    tool_use_id: `toolu_${id}_${n}`,
  };
}
