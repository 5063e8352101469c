/** Runs a program to its end for a test (or a bench) and gives its exit code and whole output. */
import { spawn } from "node:child_process";

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a process to its end and gives its exit code and whole output (resolved on `close`, so what it
 * wrote last has been read); `stdin` is written and closed, or nothing is.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly stdin?: string },
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    if (options.stdin !== undefined) {
      child.stdin?.on("error", () => {});
      child.stdin?.end(options.stdin);
    }
  });
}
