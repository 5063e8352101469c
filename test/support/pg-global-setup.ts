/**
 * vitest's global setup for the PostgreSQL test cluster (`pg-cluster.ts`): it only names the run's
 * directory; the first file that wants a database starts the cluster there, so a run of files that need
 * none pays nothing. The teardown stops the cluster and removes the directory; a run killed before its
 * teardown leaves them to the next run's setup.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestProject } from "vitest/node";
import { makeClusterDir, PG_DIR_KEY, stopCluster } from "./pg-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    [PG_DIR_KEY]: string;
  }
}

const PREFIX = "harness-pg-";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * The clusters of earlier runs that were killed before their teardown (their vitest is gone): stopped
 * and removed, so a killed run does not leave a server behind for good. Another user's are left alone.
 */
function reapOrphans(): void {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const pid = Number(/^harness-pg-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || alive(pid)) continue;
    const dir = path.join(os.tmpdir(), name);
    try {
      stopCluster(dir);
    } catch {
      // Not running (the machine restarted since), or not ours to stop.
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Not ours to remove.
    }
  }
}

export default function setup(project: TestProject): () => void {
  reapOrphans();
  const dir = path.join(os.tmpdir(), `${PREFIX}${process.pid}-${Date.now().toString(36)}`);
  makeClusterDir(dir);
  project.provide(PG_DIR_KEY, dir);
  return () => {
    try {
      stopCluster(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}
