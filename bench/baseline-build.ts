/**
 * Another commit's build beside this one, so a bench can run both in one process and one run: the
 * commit's tree is exported with `git archive` into a temporary directory (no worktree is registered,
 * nothing in the repository changes), given this checkout's `node_modules` by a symlink, and compiled
 * with its own `tsconfig.bench.json`. The build is kept under the temp dir and reused by the next run.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

/** The repository root of this checkout: the bench runs from `.bench-build/bench/`. */
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

/** The directory holding `commit`'s `.bench-build`, built now unless an earlier run built it. */
export function buildCommit(commit: string): string {
  const sha = execFileSync("git", ["-C", ROOT, "rev-parse", "--verify", `${commit}^{commit}`], {
    encoding: "utf8",
  }).trim();
  const dir = path.join(os.tmpdir(), `harness-bench-${sha.slice(0, 12)}`);
  const done = path.join(dir, ".bench-build", "BUILT");
  if (fs.existsSync(done)) {
    // Built by another checkout, since removed: its node_modules link now points nowhere.
    const modules = path.join(dir, "node_modules");
    if (!fs.existsSync(modules)) {
      fs.rmSync(modules, { force: true });
      fs.symlinkSync(path.join(ROOT, "node_modules"), modules, "dir");
    }
    return dir;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tar = path.join(dir, "tree.tar");
  execFileSync("git", ["-C", ROOT, "archive", "--format=tar", "-o", tar, sha]);
  execFileSync("tar", ["-xf", tar, "-C", dir]);
  fs.rmSync(tar);
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  process.stderr.write(`building ${commit} (${sha.slice(0, 12)}) in ${dir} …\n`);
  execFileSync(path.join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.bench.json"], {
    cwd: dir,
    stdio: "inherit",
  });
  fs.writeFileSync(done, `${sha}\n`);
  return dir;
}

/** A module of a build, by its path under `src/` (`core/evaluate.js`). */
export async function importFrom<T>(buildDir: string, modulePath: string): Promise<T> {
  return (await import(pathToFileURL(path.join(buildDir, ".bench-build", "src", modulePath)).href)) as T;
}

/** This checkout's own build (the bench's `.bench-build`). */
export const CANDIDATE_DIR = ROOT;
