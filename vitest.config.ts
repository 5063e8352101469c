import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    // Property tests print their seed on failure; keep them deterministic per run.
    testTimeout: 60_000,
    // A daemon started in a beforeAll shares the cores with two other files' daemons.
    hookTimeout: 60_000,
    // Most files wait on child processes (daemons, the CLI, git, tmux) far more than they compute, and
    // vitest's default on 2 cores is one worker: three keep both cores busy through those waits.
    maxWorkers: 3,
    // The PostgreSQL test cluster: named here, started by the first file that asks (test/support/pg-cluster.ts).
    globalSetup: ["test/support/pg-global-setup.ts"],
  },
});
