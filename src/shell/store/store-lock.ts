/**
 * One writer owns a store at a time: the daemon, or `journal import` into a store no daemon holds. The
 * lock is a file beside the store, created exclusively and naming its owner's pid; a lock whose owner is
 * no longer alive (a SIGKILLed daemon) is taken over. A pid reused by an unrelated process after a crash
 * would keep the lock until that process ends; the error names the pid so the operator can tell.
 */
import * as fs from "node:fs";

export class StoreLockedError extends Error {
  constructor(
    readonly store: string,
    readonly pid: number,
    readonly owner: string,
  ) {
    super(`store ${store} is held by process ${pid} (${owner}); stop it first, or use a read-only command`);
    this.name = "StoreLockedError";
  }
}

export interface StoreLock {
  release(): void;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Locks this process holds: a lock file naming our own pid is ours only if it is in here. */
const heldHere = new Set<string>();

export function acquireStoreLock(store: string, owner: string): StoreLock {
  const file = `${store}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, "wx", 0o600);
      try {
        fs.writeSync(fd, JSON.stringify({ pid: process.pid, owner }));
      } catch (e) {
        // A full disk says only `ENOSPC … write`: the operator needs the file it could not write.
        fs.rmSync(file, { force: true });
        throw new Error(`cannot write the lock file ${file}: ${(e as Error).message}`, { cause: e });
      } finally {
        fs.closeSync(fd);
      }
      heldHere.add(file);
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          heldHere.delete(file);
          try {
            const current = JSON.parse(fs.readFileSync(file, "utf8")) as { pid?: number };
            if (current.pid === process.pid) fs.unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      let holder: { pid?: unknown; owner?: unknown } = {};
      try {
        holder = JSON.parse(fs.readFileSync(file, "utf8")) as typeof holder;
      } catch {
        // A lock file cut short by a crash mid-write names no owner: it is stale.
      }
      const pid = typeof holder.pid === "number" ? holder.pid : undefined;
      const ours = pid === process.pid && heldHere.has(file);
      if (pid !== undefined && (ours || (pid !== process.pid && alive(pid))))
        throw new StoreLockedError(store, pid, typeof holder.owner === "string" ? holder.owner : "unknown");
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not take the lock ${file}: another process keeps recreating it`);
}
