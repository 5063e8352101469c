/**
 * vitest's global setup for the PostgreSQL test cluster (`pg-cluster.ts`): it only names the run's
 * directory; the first file that wants a database starts the cluster there, so a run of files that need
 * none pays nothing. The teardown stops the cluster and removes the directory.
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

export default function setup(project: TestProject): () => void {
  const dir = path.join(os.tmpdir(), `harness-pg-${process.pid}-${Date.now().toString(36)}`);
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
