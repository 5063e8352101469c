/**
 * Where the reference supervisor's stop command is, and the `[supervisor] stop` argv that runs it: what
 * a daemon's config needs to reach this supervisor (the command itself: `supervisor-main.ts`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The built stop command cannot be found (`npm run build` makes it). */
export class StopEntryError extends Error {
  constructor(readonly file: string) {
    super(`the reference supervisor's stop command ${file} is not built; run \`npm run build\` first`);
    this.name = "StopEntryError";
  }
}

/**
 * The absolute path of the stop command, `supervisor-main.js` beside this module once built. Run from
 * source (the tests, `tsx`), this module is `src/shell/supervisor/stop-command.ts` and the daemon still
 * execs plain `node`, so the command is the built copy under `dist/`.
 */
export function stopEntryPath(): string {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith(".ts")
    ? fileURLToPath(new URL("../../../dist/shell/supervisor/supervisor-main.js", import.meta.url))
    : path.join(path.dirname(here), "supervisor-main.js");
  if (!fs.existsSync(file)) throw new StopEntryError(file);
  return file;
}

/**
 * `[supervisor] stop` for a supervisor listening on `socketPath`: argv[0] is this very node binary
 * (the daemon execs without a shell or PATH), and the daemon appends harness, run, rule, fire id, seq.
 */
export function supervisorStopArgv(socketPath: string): readonly string[] {
  return [process.execPath, stopEntryPath(), "stop", "--socket", socketPath];
}
