/**
 * What an installed command hook runs (docs/decisions/0013-command-hook-fast-path.md): the native
 * client (`hook-client.c`), compiled here with the machine's C compiler into the agents' state directory,
 * or, where none builds it, the POSIX sh and curl script (`harness-hook.sh`). Both are handed the Node
 * forwarder's program and script, which take every call they cannot take themselves.
 *
 * The client's file name carries a digest of its source, so an upgrade that changes it builds a new one
 * beside the old, and a second install finds the first's. It is built into a temporary name and renamed,
 * so a hook never runs half a binary. It is a build, kept like a cache outside the agents' state (an
 * install refused later, for a bad settings file or no daemon, leaves that untouched); a dry run builds
 * nothing.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { stateHome } from "../../config/paths.js";

export type HookClientKind = "native" | "sh" | "node";

export interface HookLauncher {
  /** The words before `hook <format> …` in the installed command. */
  readonly launcher: readonly string[];
  readonly kind: HookClientKind;
  /** Why the sh script (or the Node forwarder) is used rather than the native client. */
  readonly why?: string;
}

/** Where the Node forwarder and the two fast paths' files are. */
export interface HookFiles {
  /** The Node executable and the bundled `bin.cjs` that runs `harness hook`. */
  readonly node: string;
  readonly bin: string;
  /** `harness-hook.sh` and `hook-client.c`, as the build copied them beside the forwarder. */
  readonly script: string;
  readonly clientSource: string;
}

/** The directory of compiled clients: `$XDG_STATE_HOME/harness/bin`. */
export const hookClientDir = (env: NodeJS.ProcessEnv): string => path.join(stateHome(env), "harness", "bin");

const COMPILE_TIMEOUT_MS = 120_000;

/** The compiled client's path for this source: `hook-client-<digest>`. */
export function hookClientPath(env: NodeJS.ProcessEnv, source: Buffer): string {
  const digest = createHash("sha256").update(source).update(process.platform).digest("hex").slice(0, 16);
  return path.join(hookClientDir(env), `hook-client-${digest}`);
}

/** Builds the client unless it is built; its path, or why it could not be built (the compiler's first line). */
export function buildHookClient(
  env: NodeJS.ProcessEnv,
  sourceFile: string,
  dryRun: boolean,
): { readonly path: string } | { readonly problem: string } {
  let source: Buffer;
  try {
    source = fs.readFileSync(sourceFile);
  } catch (e) {
    return { problem: `cannot read ${sourceFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
  }
  const out = hookClientPath(env, source);
  if (dryRun || isExecutable(out)) return { path: out };
  const cc = env.CC !== undefined && /^[A-Za-z0-9_./+-]+$/.test(env.CC) ? env.CC : "cc";
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
    execFileSync(cc, ["-O2", "-o", tmp, sourceFile], {
      env: { ...env, PATH: env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "ignore", "pipe"],
      timeout: COMPILE_TIMEOUT_MS,
    });
    fs.chmodSync(tmp, 0o700);
    fs.renameSync(tmp, out);
    return { path: out };
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    const err = e as { code?: string; stderr?: Buffer };
    const first = err.stderr?.toString("utf8").split("\n")[0]?.slice(0, 200);
    return {
      problem:
        err.code === "ENOENT"
          ? `no C compiler (${cc}) on PATH`
          : `${cc} failed${first === undefined || first === "" ? "" : `: ${first}`}`,
    };
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The launcher an install writes: the native client where it builds, else the sh script. */
export function hookLauncher(env: NodeJS.ProcessEnv, files: HookFiles, dryRun: boolean): HookLauncher {
  const built = buildHookClient(env, files.clientSource, dryRun);
  if ("path" in built) return { launcher: [built.path, files.node, files.bin], kind: "native" };
  return {
    launcher: ["/bin/sh", files.script, files.node, files.bin],
    kind: "sh",
    why: built.problem,
  };
}

/**
 * A remote install's launcher: the Node forwarder itself, which alone computes the call's git facts
 * on this machine and speaks TLS to the daemon (decision 0017: the fast paths parse no JSON).
 */
export const remoteLauncher = (files: HookFiles): HookLauncher => ({
  launcher: [files.node, files.bin],
  kind: "node",
  why: "a remote daemon: it computes the git facts here and speaks TLS",
});
