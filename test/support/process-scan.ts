/**
 * Watching a command's processes for a secret: every process below a root pid (found through each
 * process's parent in `/proc/<pid>/stat`), its `/proc/<pid>/cmdline` and `/proc/<pid>/environ` read
 * while the command runs, for the forge token (`test/shell/forge/propose-credential.test.ts`) and the policy credential.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** Every process below `root`. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name is in parentheses and may hold spaces: the parent pid follows its last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p))
      if (p === root) {
        out.push(pid);
        break;
      }
  }
  return out;
}

export interface Scan {
  readonly exitCode: number | null;
  /** Each process seen, by pid: its argv joined with spaces. */
  readonly commands: readonly string[];
  /** Where the secret was found: "cmdline of <pid>: …" or "environ of <pid>: …". */
  readonly leaks: readonly string[];
  /** How many scans of the process tree ran. */
  readonly scans: number;
}

/** Scans `child` and its descendants for `secret` until it exits. */
export async function scanUntilExit(child: ChildProcess, secret: string): Promise<Scan> {
  const token = Buffer.from(secret);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on("exit", (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const seen = new Map<number, string>();
  const leaks: string[] = [];
  let scans = 0;
  while (exitCode === undefined) {
    scans++;
    for (const pid of [child.pid as number, ...descendants(child.pid as number)]) {
      try {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`);
        const environ = fs.readFileSync(`/proc/${pid}/environ`);
        const shown = cmdline.toString().replace(/\0/g, " ").trim();
        seen.set(pid, shown);
        if (cmdline.includes(token)) leaks.push(`cmdline of ${pid}: ${shown}`);
        if (environ.includes(token)) leaks.push(`environ of ${pid}: ${shown}`);
      } catch {
        // It exited between the listing and the read.
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await exited;
  return { exitCode: exitCode ?? null, commands: [...seen.values()], leaks, scans };
}

/** The built CLI run with `args` under `env`, its output collected for after the scan. */
export function spawnCli(cli: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return { child, output: () => ({ stdout, stderr }) };
}

/** Every file under `dir`, for a search for the secret at rest. */
export function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((e) => (e.isFile() ? [path.join(e.parentPath, e.name)] : []));
}
