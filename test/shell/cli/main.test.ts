/**
 * The command line's small contracts (issue 16, item 7), each against a real daemon through the built
 * CLI: usage errors exit 2, a closed pipe ends a command quietly, and a bad rule file is named at 1:1.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, TestFleet } from "../daemon-harness.js";

const f = new TestFleet();
beforeAll(async () => {
  await f.start();
});
afterAll(() => f.dispose());

describe("harness, the command line", () => {
  it("refuses an empty harness name as a usage error rather than admitting it", async () => {
    const r = await f.cli(["rules", "admission", ""]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("harness rules admission: <harness> is required\n");
    expect(r.code).toBe(2);
  });

  it("exits 2 for a 300-character name from admission and show alike (invalid_argument)", async () => {
    const name = "x".repeat(300);
    const admission = await f.cli(["rules", "admission", name]);
    const show = await f.cli(["rules", "show", name]);
    expect([admission.code, show.code]).toEqual([2, 2]);
  });

  it("ends quietly when its reader closes the pipe (rules list | head)", async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "rules", "list"], {
        env: f.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      // The reader goes away before the command writes, as `head` does once it has its lines.
      child.stdout.destroy();
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("exit", (code) => resolve({ code, stderr }));
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("reports --limit -1 as a bad value, not an unknown option", async () => {
    const r = await f.cli(["rules", "holds", "--limit", "-1"]);
    expect(r.stderr).toBe("harness rules holds: --limit must be a positive whole number\n");
    expect(r.code).toBe(2);
  });

  it("names an oversized or non-UTF-8 rule file at 1:1 in rules backtest", async () => {
    const big = path.join(f.root, "big.toml");
    fs.writeFileSync(big, `# ${"x".repeat(300 * 1024)}\n`);
    const latin1 = path.join(f.root, "latin1.toml");
    fs.writeFileSync(latin1, Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x20, 0x3d, 0x20, 0x22, 0xe9, 0x22, 0x0a]));
    const r1 = await f.cli(["rules", "backtest", big]);
    expect(r1.stderr).toBe(
      `harness rules backtest: ${big}:1:1: schema: the file is larger than 256 KiB, the limit for a rule file\n`,
    );
    const r2 = await f.cli(["rules", "backtest", latin1]);
    expect(r2.stderr).toBe(`harness rules backtest: ${latin1}:1:1: schema: the file is not valid UTF-8\n`);
    expect([r1.code, r2.code]).toEqual([1, 1]);
  });

  it("daemon --json prints its start line as one JSON object among its JSON log lines", async () => {
    const other = new TestFleet();
    try {
      const child = spawn(process.execPath, [CLI, "daemon", "--json"], {
        env: other.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes('"daemon_started"')) resolve();
        });
        child.on("exit", () => reject(new Error(`daemon --json exited: ${stderr}`)));
      });
      child.kill("SIGTERM");
      await exited;
      const lines = stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const started = lines.filter((l) => l.event === "daemon_started");
      // A test fleet turns the http hooks off (`[agents] listen = ""`): the default port is the host's.
      expect(started).toEqual([
        {
          event: "daemon_started",
          store: other.storePath,
          socket: other.socketPath,
          metrics: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
          hooks: null,
          rpc: null,
          tls_sha256: null,
        },
      ]);
      expect(stderr).not.toContain("harness daemon: store");
    } finally {
      await other.dispose();
    }
  });
});
