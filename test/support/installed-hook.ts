/**
 * Drives a hook exactly as `harness agents install` wrote it: the handler our install put in an agent's
 * settings file for an event, run the way the agent runs it (a command hook through `/bin/sh -c` with
 * the payload on stdin). Shared by the remote agents' tests and, across network namespaces, the fleet
 * tests that run the same installed hooks from a "laptop" namespace (`wrap` puts the command inside one,
 * e.g. `["ip", "netns", "exec", NAME]`).
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { shellWords } from "../../src/shell/support/shell-word.js";

export interface HookRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

type Handler = Record<string, unknown>;

/** The handlers of `event` in a settings file (`{"hooks": {Event: [{"hooks": [handler]}]}}`). */
export function installedHandlers(settingsFile: string, event: string): Handler[] {
  const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as {
    hooks?: Record<string, { hooks?: Handler[] }[]>;
  };
  return (settings.hooks?.[event] ?? []).flatMap((g) => g.hooks ?? []);
}

/** The one command our install wrote for `event` (the handler that runs `… hook <format> --harness NAME`). */
export function installedCommand(settingsFile: string, event: string, harness: string): string {
  const commands = installedHandlers(settingsFile, event)
    .map((h) => h.command)
    .filter((c): c is string => {
      const words = typeof c === "string" ? shellWords(c) : undefined;
      const at = words?.indexOf("hook") ?? -1;
      return words !== undefined && at >= 0 && words[at + 2] === "--harness" && words[at + 3] === harness;
    });
  if (commands.length !== 1)
    throw new Error(`${settingsFile}: ${commands.length} command hooks of harness ${harness} for ${event}`);
  return commands[0] as string;
}

/** Runs `command` as the agent would, with `payload` on stdin, in `env`; `wrap` runs it inside something. */
export function runInstalledCommand(
  command: string,
  payload: unknown,
  env: NodeJS.ProcessEnv,
  wrap: readonly string[] = [],
): Promise<HookRun> {
  const [program, ...args] = [...wrap, "/bin/sh", "-c", command];
  const child = spawn(program as string, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin.on("error", () => {
    // The hook may stop reading before the payload's end.
  });
  child.stdin.end(typeof payload === "string" ? payload : JSON.stringify(payload));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The installed hook of `event` for `harness`, run with `payload`: what the agent would see. */
export const driveInstalledHook = (
  settingsFile: string,
  event: string,
  harness: string,
  payload: unknown,
  env: NodeJS.ProcessEnv,
  wrap: readonly string[] = [],
): Promise<HookRun> =>
  runInstalledCommand(installedCommand(settingsFile, event, harness), payload, env, wrap);
