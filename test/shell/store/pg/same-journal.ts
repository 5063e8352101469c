/**
 * One journal on both backends: each batch committed to PostgreSQL through `PgJournal.commit`, then to
 * SQLite through `JournalCommits` with the `at` PostgreSQL gave it, so the two hold the same rows with
 * the same seqs and times.
 */
import type { EventKind } from "../../../../src/core/kinds.js";
import type { JournalCommits } from "../../../../src/shell/store/journal-commits.js";
import type { PgJournal, PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { fleetMonth } from "../../fleet-month.js";

const FROM = Date.parse("2026-09-01T00:00:00Z");

/** A fleet's journal (`../../fleet-month.ts`) as rows to append; their times are the database's. */
export const fleetRows = (days: number, seed: number): PgNewRow[] =>
  fleetMonth({ from: FROM, days, seed }).map(({ kind, admitted_at: _, ...event }) => ({
    kind: kind as EventKind,
    source: kind === "tick" ? "tick" : "observer",
    event: event as { type: string },
  }));

/** Commits the batches to both in order; the `at` of each. */
export async function sameJournal(
  pg: PgJournal,
  sqlite: JournalCommits,
  batches: readonly (readonly PgNewRow[])[],
): Promise<number[]> {
  const ats: number[] = [];
  for (const rows of batches) {
    if (rows.length === 0) continue;
    const { at } = await pg.commit([{ rows }]);
    sqlite.commit(() => {
      for (const row of rows) sqlite.journal.append({ ...row, at });
    });
    ats.push(at);
  }
  return ats;
}

/** `rows` cut into batches of the sizes given in turn. */
export function batchesOf<T>(rows: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, k = 0; i < rows.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length] ?? 1);
    out.push(rows.slice(i, i + n));
    i += n;
  }
  return out;
}
