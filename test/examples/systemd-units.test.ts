/**
 * examples/systemd: the units pass `systemd-analyze verify` (no unknown key, no bad value), and what they
 * claim holds for the real daemon: started with the unit's ExecStart and Environment and the example
 * config, under a temporary root that stands for `/`, it makes its store in the StateDirectory and its
 * socket in the RuntimeDirectory, ExecReload reloads it, the policy sync unit's command succeeds against
 * it, and KillSignal stops it cleanly within TimeoutStopSec.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, runProcess } from "../shell/daemon-harness.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/systemd/", import.meta.url));
const UNITS = ["harness-rules.service", "harness-policy-sync.service", "harness-policy-sync.timer"];
const BIN = "/usr/local/bin/harness";
const BUILT_BIN = fileURLToPath(new URL("../../dist/shell/cli/bin.cjs", import.meta.url));

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-sd-")));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const unitText = (name: string): string => fs.readFileSync(path.join(EXAMPLES, name), "utf8");

/** A unit's values of `key` in its [Service] section, in order. */
function values(unit: string, key: string): string[] {
  return unitText(unit)
    .split("\n")
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));
}

/** The unit's paths moved under the test's root, which stands for `/`. */
const rooted = (text: string): string => text.replace(/(^|[\s="])\/(var|run|etc)\//g, `$1${root}/$2/`);

const hasSystemdAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

describe("examples/systemd", () => {
  it.skipIf(!hasSystemdAnalyze && process.env.CI !== "true")(
    "the units pass systemd-analyze verify with nothing to say",
    () => {
      expect(hasSystemdAnalyze, "systemd-analyze is on every CI machine (Debian's systemd)").toBe(true);
      const dir = path.join(root, "verify");
      fs.mkdirSync(dir);
      // verify checks that ExecStart's program exists and is executable: the built CLI stands in.
      const harness = path.join(dir, "harness");
      fs.writeFileSync(
        harness,
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BUILT_BIN)} "$@"\n`,
        {
          mode: 0o755,
        },
      );
      for (const u of UNITS) fs.writeFileSync(path.join(dir, u), unitText(u).replaceAll(BIN, harness));
      const r = spawnSync("systemd-analyze", ["verify", ...UNITS.map((u) => `./${u}`)], {
        cwd: dir,
        encoding: "utf8",
      });
      // An unknown key is only a warning (exit 0): the test wants no output at all.
      expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({
        status: 0,
        stderr: "",
        stdout: "",
      });
    },
  );

  it("the daemon runs as the unit starts it: store in StateDirectory, socket in RuntimeDirectory, reload, policy sync, clean stop", async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
    for (const e of values("harness-rules.service", "Environment")) {
      const [k, v] = e.split("=", 2) as [string, string];
      env[k] = rooted(v);
    }
    // What systemd makes before ExecStart: StateDirectory, RuntimeDirectory, ConfigurationDirectory.
    for (const d of ["var/lib/harness", "run/harness", "etc/harness"])
      fs.mkdirSync(path.join(root, d), { recursive: true, mode: 0o700 });
    // The example config, its paths under the root; the only addition keeps the test's listeners off
    // fixed ports, so tests running beside it cannot collide.
    fs.writeFileSync(
      path.join(root, "etc/harness/harness.toml"),
      `${rooted(fs.readFileSync(path.join(EXAMPLES, "harness.toml"), "utf8")).replace(
        "[server]\n",
        '[server]\nmetrics_listen = "127.0.0.1:0"\n',
      )}\n[agents]\nlisten = ""\n`,
    );
    const argv = (line: string) => rooted(line).split(" ").slice(1);
    const [execStart] = values("harness-rules.service", "ExecStart");
    const [execReload] = values("harness-rules.service", "ExecReload");
    const [syncStart] = values("harness-policy-sync.service", "ExecStart");
    if (execStart === undefined || execReload === undefined || syncStart === undefined)
      throw new Error("a unit lost its Exec line");

    const daemon = spawn(process.execPath, [CLI, ...argv(execStart)], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    daemon.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => daemon.on("exit", (code) => resolve(code)));
    try {
      const socket = path.join(root, "run/harness/harness.sock");
      const start = Date.now();
      while (!fs.existsSync(socket)) {
        if (Date.now() - start > 20_000) throw new Error(`the daemon made no socket\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(fs.existsSync(path.join(root, "var/lib/harness/harness.db"))).toBe(true);
      expect(fs.existsSync(path.join(root, "var/lib/harness/control.token"))).toBe(true);

      const reload = await runProcess(process.execPath, [CLI, ...argv(execReload)], { env });
      expect(reload.code, reload.stderr).toBe(0);
      const sync = await runProcess(process.execPath, [CLI, ...argv(syncStart)], { env });
      expect(sync.code, sync.stderr).toBe(0);
    } finally {
      const [signal] = values("harness-rules.service", "KillSignal");
      daemon.kill((signal ?? "SIGTERM") as NodeJS.Signals);
    }
    const timeoutS = Number.parseInt(values("harness-rules.service", "TimeoutStopSec")[0] ?? "90", 10);
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r("still running"), timeoutS * 1000)),
    ]);
    expect(code, stderr).toBe(0);
  }, 60_000);
});
