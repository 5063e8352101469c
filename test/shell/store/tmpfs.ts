/**
 * A real tmpfs for disk-full tests. Mounting needs root, which CI has: under `CI=true` a mount that
 * fails fails the test, so a broken CI setup cannot pass by skipping; elsewhere a user who is not root
 * gets the test skipped, with the reason.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface Tmpfs {
  readonly dir: string;
  /** Fills the file system but `slackBytes`: a file written until the disk refuses. */
  fill(slackBytes?: number): void;
  /** Frees what `fill` took. */
  unfill(): void;
  unmount(): void;
}

/** Why the test cannot mount here (skip with it), or undefined when it must try. */
export function tmpfsUnavailable(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CI === "true") return undefined;
  if (process.getuid?.() !== 0) return "mounting a tmpfs needs root (CI runs as root and never skips this)";
  return undefined;
}

/** Mounts a tmpfs of `sizeBytes` on `dir` (created, mode 0700); throws when it cannot. */
export function mountTmpfs(dir: string, sizeBytes: number): Tmpfs {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0700`, "tmpfs", dir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const filler = path.join(dir, "filler");
  return {
    dir,
    fill(slackBytes = 0) {
      const fd = fs.openSync(filler, "a");
      try {
        for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
          const chunk = Buffer.alloc(size);
          try {
            for (;;) fs.writeSync(fd, chunk);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
          }
        }
      } finally {
        fs.closeSync(fd);
      }
      if (slackBytes > 0) fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - slackBytes));
    },
    unfill() {
      fs.rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    },
  };
}
