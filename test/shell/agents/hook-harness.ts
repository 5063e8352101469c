/**
 * What agents-ingest's end-to-end tests share: a temporary git repository, a real `harness hook` process
 * (the built `bin.cjs`) against a `TestFleet`, and the journal's run_event rows.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { journalRows } from "../../support/store-reads.js";
import type { CliResult, TestFleet } from "../daemon-harness.js";

export const BIN = fileURLToPath(new URL("../../../dist/shell/cli/bin.cjs", import.meta.url));
export const PASSWORD = "hunter2-password";

export interface Row {
  readonly seq: number;
  readonly type: string;
  readonly source: string;
  readonly event: Record<string, unknown>;
  readonly raw: string;
}

/** A git repository on branch `feature`, origin `https://bot:<password>@Forge.example/org/reduit.git`. */
export function makeRepo(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-agents-repo-")));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
  git("init", "-q", "-b", "main");
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "a.ts"), "a\n");
  fs.symlinkSync("/etc", path.join(dir, "out"));
  git("add", ".");
  git("commit", "-q", "-m", "init");
  git("checkout", "-q", "-b", "feature");
  git("remote", "add", "origin", `https://bot:${PASSWORD}@Forge.example/org/reduit.git`);
  return dir;
}

export function runHook(
  fleet: TestFleet,
  adapter: string,
  stdin: string | Buffer,
  extra: readonly string[] = [],
): Promise<CliResult> {
  return startHook(fleet, adapter, stdin, extra).result;
}

/** A `harness hook` process, for a test that must signal it; `result` once it exits. */
export function startHook(
  fleet: TestFleet,
  adapter: string,
  stdin: string | Buffer,
  extra: readonly string[] = [],
): { readonly child: ChildProcess; readonly result: Promise<CliResult> } {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "hook",
      adapter,
      "--harness",
      "impl",
      "--observer-token",
      fleet.tokens.get("observer") as string,
      "--ledger-token",
      fleet.tokens.get("ledger") as string,
      "--socket",
      fleet.socketPath,
      ...extra,
    ],
    { env: fleet.env, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin.on("error", () => {
    // The hook may stop reading a payload past its bound.
  });
  // On `close`, not `exit`: a line the hook wrote last may still be in the pipe when it exits.
  const result = new Promise<CliResult>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  child.stdin.end(stdin);
  return { child, result };
}

export const rowsOf = (fleet: TestFleet, session?: string): Row[] =>
  journalRows(fleet, { kind: "run_event" })
    .map((r) => ({
      seq: r.seq,
      type: r.type,
      source: r.source,
      raw: JSON.stringify(r.event),
      event: r.event,
    }))
    .filter((r) => session === undefined || r.event.session === session);
