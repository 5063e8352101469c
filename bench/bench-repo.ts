/** The git repository a hook bench's agent works in: one commit on `main`, `src/a.ts`, an origin remote. */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export function benchRepo(dir: string, origin: string): string {
  fs.mkdirSync(path.join(dir, "src"), { recursive: true, mode: 0o700 });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  fs.writeFileSync(path.join(dir, "src", "a.ts"), "a\n");
  git("add", ".");
  git("commit", "-q", "-m", "init");
  git("remote", "add", "origin", origin);
  return dir;
}
