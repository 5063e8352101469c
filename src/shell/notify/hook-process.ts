/**
 * One run of a command the operator configured, the notify hook or `[supervisor] stop`: exec'd without a shell in its own process group, the input written to
 * its stdin and closed, its output drained and discarded but for a bounded tail, and its whole group
 * killed at the timeout, so a child it forked (a curl, a sleep) goes with it. Never throws: a hook
 * that cannot be started is an `error` outcome like one that exits non-zero.
 */
import { type ChildProcess, spawn } from "node:child_process";

export type HookResult = "ok" | "error" | "timeout";

export interface HookOutcome {
  readonly result: HookResult;
  /** Why, for every result but ok: `exit status 3`, `spawn ENOENT`, `killed after 300 ms`. */
  readonly reason: string;
  /** The last bytes of stdout and stderr together, for a log line; not redacted. */
  readonly output: string;
  readonly durationMs: number;
}

export interface HookRun {
  /** argv[0] is an absolute path; `checkCommand` has refused anything else. */
  readonly argv: readonly string[];
  readonly input: string;
  /** The whole environment of the hook: nothing else is inherited. */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Aborting kills the hook's group now; the outcome is then `error`. */
  readonly signal?: AbortSignal;
}

/** How much output is kept: enough for a log line, and bounded however much a hook writes. */
export const OUTPUT_TAIL_BYTES = 4096;

/** The last `limit` bytes written, copied out of the chunks so no large chunk stays referenced. */
class OutputTail {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly limit: number) {}

  readonly push = (chunk: Buffer): void => {
    const joined = chunk.length >= this.limit ? chunk : Buffer.concat([this.buf, chunk]);
    this.buf = joined.length > this.limit ? Buffer.from(joined.subarray(joined.length - this.limit)) : joined;
  };

  text(): string {
    return this.buf.toString("utf8");
  }
}

/** Runs the operator's command (the notify hook, or the daemon's stop command) once, to its end or timeout. */
export function runOperatorCommand(run: HookRun): Promise<HookOutcome> {
  const { argv, input, env, timeoutMs, signal } = run;
  const started = performance.now();
  const tail = new OutputTail(OUTPUT_TAIL_BYTES);
  return new Promise((resolve) => {
    let settled = false;
    let killedBy: "timeout" | "abort" | undefined;
    let child: ChildProcess | undefined;
    let timer: NodeJS.Timeout | undefined;

    const finish = (result: HookResult, reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve({ result, reason, output: tail.text(), durationMs: Math.round(performance.now() - started) });
    };
    const killGroup = (): void => {
      const pid = child?.pid;
      if (pid !== undefined) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // ESRCH: the group is already gone.
        }
      }
      // A process that left the group (setsid) may still hold the pipes; stop waiting on them.
      child?.stdout?.destroy();
      child?.stderr?.destroy();
    };
    const kill = (why: "timeout" | "abort"): void => {
      killedBy ??= why;
      killGroup();
    };
    const onAbort = (): void => kill("abort");

    const [file, ...args] = argv;
    try {
      child = spawn(file as string, args, { shell: false, detached: true, env, stdio: "pipe" });
    } catch (err) {
      finish("error", `spawn: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    // ENOENT, EACCES: reported once, here; the group (if any) goes too.
    child.on("error", (err: NodeJS.ErrnoException) => {
      killGroup();
      finish("error", `spawn ${err.code ?? err.message}`);
    });
    child.on("close", (code, sig) => {
      if (killedBy === "timeout") finish("timeout", `killed after ${timeoutMs} ms`);
      else if (killedBy === "abort") finish("error", "killed: aborted");
      else if (code === 0) finish("ok", "");
      else finish("error", code === null ? `killed by ${sig}` : `exit status ${code}`);
    });
    child.stdout?.on("data", tail.push);
    child.stderr?.on("data", tail.push);
    // A hook that exits without reading its stdin (EPIPE) has still been delivered to.
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);

    timer = setTimeout(() => kill("timeout"), timeoutMs);
    if (signal?.aborted) kill("abort");
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
