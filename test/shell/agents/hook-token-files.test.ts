/**
 * The command hook's token files (issue 26, finding 12): a FIFO or an oversized file in a token file's
 * place is refused with one clear line, never waited on, and the tool runs.
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN } from "./hook-harness.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-hook-tokens-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The hook with these token files; killed after 20 s, so a hang fails the test with a null code. */
function hook(observer: string, ledger: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [BIN, "hook", "claude-code", "--harness", "impl", "--observer-token", observer, "--ledger-token", ledger],
    { env: { ...process.env, XDG_STATE_HOME: dir, XDG_RUNTIME_DIR: dir }, stdio: ["pipe", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
  child.stdin.end(JSON.stringify({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash" }));
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    }),
  );
}

describe("finding 12: the command hook's token files", () => {
  const good = path.join(dir, "ledger.token");
  fs.writeFileSync(good, "a-ledger-token\n", { mode: 0o600 });

  it("a FIFO in the observer token's place is refused at once, not waited on; the tool runs", async () => {
    const fifo = path.join(dir, "observer.fifo");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    const r = await hook(fifo, good);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/observer\.fifo is not a regular file.*the tool runs/);
  }, 30_000);

  it("a token file larger than 4 KiB is refused, naming its size", async () => {
    const big = path.join(dir, "big.token");
    fs.writeFileSync(big, "x".repeat(5000), { mode: 0o600 });
    const r = await hook(big, good);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/big\.token is 5000 bytes long; a token file holds at most 4096/);
  }, 30_000);
});
