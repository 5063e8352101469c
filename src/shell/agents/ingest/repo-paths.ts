/**
 * A tool call's paths as a row may hold them: relative to the git top level of the session's `cwd`.
 * A path is dropped (never the row) when it holds a control character, lies outside the top level, or
 * reaches outside it through a symlink: the existing part of the path is resolved on disk, so a link
 * inside the repository pointing out of it is caught, and a file not yet written (a Write) is judged by
 * its directory. At most `ROW_PATHS`, in the order the call named them, without repeats. A path past
 * `MAX_RAW_PATH`, or with more than `MAX_MISSING_COMPONENTS` components not on disk, is dropped before
 * (or instead of) more lookups: each costs a system call.
 *
 * Synchronous, with the system's own realpath(3): one call each, microseconds, where the promise form
 * sends every lookup through libuv's thread pool and back through the event loop, which under load
 * costs a tool call far more than the lookup.
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";
import {
  MAX_MISSING_COMPONENTS,
  MAX_RAW_PATH,
  MAX_RAW_PATHS,
  ROW_PATH,
  ROW_PATHS,
} from "./payload-bounds.js";

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * `p` resolved on disk as far as it exists, the rest appended as written; undefined when more than
 * `MAX_MISSING_COMPONENTS` of it are missing.
 */
function resolveExisting(p: string): string | undefined {
  const rest: string[] = [];
  let dir = p;
  for (;;) {
    if (rest.length > MAX_MISSING_COMPONENTS) return undefined;
    try {
      return path.join(realpathSync.native(dir), ...rest);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
      const parent = path.dirname(dir);
      if (parent === dir) return undefined;
      rest.unshift(path.basename(dir));
      dir = parent;
    }
  }
}

const inside = (rel: string): boolean =>
  rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);

/**
 * The repo-relative form of each of `paths` (absolute, or relative to `cwd`) that may be kept;
 * `realTop` is the top level with its symlinks resolved (`GitFacts.realTop`).
 */
export function repoPaths(paths: readonly string[], cwd: string, realTop: string): string[] {
  if (!path.isAbsolute(cwd)) return [];
  const out: string[] = [];
  for (const raw of paths.slice(0, MAX_RAW_PATHS)) {
    if (out.length >= ROW_PATHS) break;
    if (raw === "" || raw.length > MAX_RAW_PATH || CONTROL.test(raw) || LONE_SURROGATE.test(raw)) continue;
    const abs = path.resolve(cwd, raw);
    const real = resolveExisting(abs);
    if (real === undefined) continue;
    const rel = path.relative(realTop, real);
    if (!inside(rel) || [...rel].length > ROW_PATH) continue;
    const slashed = rel.split(path.sep).join("/");
    if (!out.includes(slashed)) out.push(slashed);
  }
  return out;
}
