/**
 * `npm run soak`: the property tests with many more cases and a printed seed, and the crash matrix (on
 * the built CLI, on SQLite and PostgreSQL) at more positions, its batch order varied by that seed, and the disk-full hook burst at
 * full size. Replay a failure with
 * `FC_SEED=<seed> PROPERTY_RUNS_FACTOR=<factor> npx vitest run <file>`.
 */
import { spawnSync } from "node:child_process";

const seed = process.env.FC_SEED ?? String(Date.now() % 2 ** 31);
const factor = process.env.PROPERTY_RUNS_FACTOR ?? "50";
console.log(`soak: FC_SEED=${seed} PROPERTY_RUNS_FACTOR=${factor}`);
const result = spawnSync(
  "npx",
  [
    "vitest",
    "run",
    "test/cel",
    "test/core",
    "test/shell/daemon/evaluator.test.ts",
    "test/shell/daemon/event-bus.test.ts",
    "test/shell/lint/lint-load-agreement.test.ts",
    "test/shell/policy/git.test.ts",
    "test/shell/daemon/crash-matrix.test.ts",
    "test/shell/journal-query/count-journal.property.test.ts",
    "test/shell/graph/file-edges-property.test.ts",
    "test/shell/agents/ingest/go-json-digest.test.ts",
    "test/shell/agents/adapters/mapping-bounds.property.test.ts",
    "test/shell/agents/install/settings-merge.test.ts",
    "test/shell/agents/forwarder/hook-fast-path.property.test.ts",
    "test/shell/gateway/listener-caps.soak.test.ts",
    // A hook burst of 300 calls onto a full tmpfs (24 in npm test).
    "test/shell/store/disk-full-daemon.test.ts",
    "test/shell/journal/fair-share.test.ts",
    // Concurrent writers on PostgreSQL against a reader in seq order (decision 0019).
    "test/shell/store/pg/pg-journal-order.property.test.ts",
    // Live = fold, backtest and journal queries on PostgreSQL against SQLite (issue 34).
    "test/shell/store/pg/pg-live-evaluation.test.ts",
    "test/shell/backtest/replay-on-pg.test.ts",
    "test/shell/journal-query/pg-journal-queries.test.ts",
    // The leader of two and of three daemons on one database killed at every point and reach (issue 35).
    "test/shell/daemon/failover-matrix.test.ts",
    // Four laptops in network namespaces, their links dropped and returned in a seeded order.
    "test/shell/fleet/fleet-matrix.soak.test.ts",
    // npm pack, npm install -g into a temporary prefix (better-sqlite3 compiles: minutes), harness demo.
    "test/examples/pack-install.soak.test.ts",
  ],
  {
    stdio: "inherit",
    env: { ...process.env, FC_SEED: seed, PROPERTY_RUNS_FACTOR: factor },
  },
);
console.log(`soak: FC_SEED=${seed} PROPERTY_RUNS_FACTOR=${factor} exit ${result.status}`);
process.exit(result.status ?? 1);
