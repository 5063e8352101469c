/**
 * Reading and writing an agent's settings file. A file that does not parse, or is not the shape the
 * agents read, is refused with its path, line and column, and nothing is written. A change is written
 * atomically (a temporary file beside it, then a rename) with the file's own mode, after the old bytes
 * are copied to a backup under the state directory (0600: in http mode the old file may hold tokens).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Source } from "../../../cel/index.js";
import { readBounded } from "../../support/bounded-read.js";
import { JsonSyntaxError } from "./json-text.js";
import { SettingsShapeError } from "./settings-merge.js";

/** Settings files are small; a larger one is not one we should be rewriting. */
const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

/** A settings file that cannot be read or used: where, and why. Nothing was written. */
export class SettingsFileError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${file}${line === undefined ? "" : `:${line}:${column}`}: ${reason}`);
    this.name = "SettingsFileError";
  }
}

/** The file's text, or undefined when there is no file yet. */
export function readSettings(file: string): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  const r = readBounded(file, MAX_SETTINGS_BYTES);
  if ("error" in r) throw new SettingsFileError(file, r.error);
  if (r.bytes.length > MAX_SETTINGS_BYTES)
    throw new SettingsFileError(file, "the file is larger than 4 MiB, too large for a settings file");
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(r.bytes);
  } catch {
    throw new SettingsFileError(file, "the file is not valid UTF-8", 1, 1);
  }
}

/** Runs `edit` over the file's text, turning a syntax or shape error into a located `SettingsFileError`. */
export function located<T>(file: string, text: string, edit: () => T): T {
  try {
    return edit();
  } catch (e) {
    if (e instanceof JsonSyntaxError || e instanceof SettingsShapeError) {
      const { line, column } = new Source(text, file).location(e.offset);
      const what = e instanceof JsonSyntaxError ? `not valid JSON: ${e.message}` : e.message;
      throw new SettingsFileError(file, what, line, column);
    }
    throw e;
  }
}

/** Copies the file's current bytes into `dir`, named for when and what; returns the backup's path. */
export function backUp(file: string, dir: string, label: string, now: number): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date(now)
    .toISOString()
    .replaceAll(":", "")
    .replace(/\.\d+Z$/, "Z");
  let target = path.join(dir, `${stamp}-${label}-${path.basename(file)}`);
  for (let n = 2; fs.existsSync(target); n++)
    target = path.join(dir, `${stamp}-${label}-${n}-${path.basename(file)}`);
  fs.copyFileSync(file, target, fs.constants.COPYFILE_EXCL);
  fs.chmodSync(target, 0o600);
  return target;
}

/**
 * Writes `text` to `file` atomically, keeping an existing file's mode; a new file (and its directory)
 * gets `newMode`. `narrow` takes group and other access away (http mode writes tokens into the file).
 */
export function writeSettings(
  settingsFile: string,
  text: string,
  options: { newMode: number; narrow: boolean },
): void {
  // A settings file linked from elsewhere (a dotfiles checkout) is written where it lives; the link stays.
  const file = fs.existsSync(settingsFile) ? fs.realpathSync(settingsFile) : settingsFile;
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  let mode = options.newMode;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  if (options.narrow) mode &= 0o700;
  const tmp = path.join(dir, `.${path.basename(file)}.harness-${process.pid}.tmp`);
  const fd = fs.openSync(tmp, "w", mode);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  // The umask may have narrowed the mode at creation; the file's own mode is what it had.
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}
