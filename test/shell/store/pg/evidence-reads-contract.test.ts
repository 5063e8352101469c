/**
 * Issue 34: EvidenceReads on PostgreSQL answers whether the store holds what an evidence id names as
 * SQLite's does over the same journal and decisions: fires, rows, runs, harnesses, files, annotated
 * nodes and graph nodes (an edge's ends, a fact's subject), present and absent.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { EvidenceReads } from "../../../../src/shell/store/evidence-reads.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgEvidenceReads } from "../../../../src/shell/store/pg/pg-evidence-reads.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { HARNESSES, NODES, PATHS, planArb, populate, REPO, RUNS } from "./same-decisions.js";

const stores = tempStores("evidence-reads-contract-");
const pgStores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of pgStores.splice(0)) await s.close();
});

describe("EvidenceReads on PostgreSQL", () => {
  it("answers every evidence lookup as SQLite's does over the same journal and decisions", async () => {
    const answers = new Set<string>();
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        const sqlite = stores.open(stores.storeFile());
        const pg = await openFreshPgStore("evidence_reads", 3);
        pgStores.push(pg);
        try {
          const { rows, fires } = await populate(sqlite, pg, plan);
          const lite = new EvidenceReads(sqlite.db);
          const post = new PgEvidenceReads(pg.pool);
          const same = async (name: string, read: (r: EvidenceReads | PgEvidenceReads) => unknown) => {
            const a = await read(lite);
            expect(await read(post), name).toBe(a);
            answers.add(`${name}:${String(a)}`);
          };
          for (const id of [...fires.slice(0, 20).map((f) => f.id), "f-999-0"])
            await same("fire", (r) => r.fire(id));
          for (const seq of [0, 1, rows.length, rows.length + 1]) await same("row", (r) => r.journalRow(seq));
          for (const harness of [...HARNESSES, "none"]) {
            await same("harness", (r) => r.harness(harness));
            for (const run of [...RUNS, "none"]) await same("run", (r) => r.run(harness, run));
          }
          for (const repo of [REPO, "other"])
            for (const path of [...PATHS, "none"]) await same("file", (r) => r.file(repo, path));
          for (const node of [...NODES, "7", "none"]) {
            await same("annotated", (r) => r.annotated(node));
            await same("graphNode", (r) => r.graphNode(node));
          }
        } finally {
          await pg.close();
          pgStores.splice(pgStores.indexOf(pg), 1);
        }
      }),
      { numRuns: runs(8) },
    );
    // Each lookup answered both ways across the plans.
    for (const name of ["fire", "row", "harness", "run", "file", "annotated", "graphNode"])
      for (const answer of ["true", "false"])
        expect(answers, `${name}:${answer}`).toContain(`${name}:${answer}`);
  }, 240_000);
});
