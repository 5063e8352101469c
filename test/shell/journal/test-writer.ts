/** A journal writer for tests that drive it by hand: nothing to tell after a commit, and a failed one thrown. */
import { JournalWriter, type JournalWriterOptions } from "../../../src/shell/journal/journal-writer.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import type { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";

export function testWriter(
  db: Db,
  journal: JournalTable,
  options: Pick<JournalWriterOptions, "clock"> & Partial<JournalWriterOptions>,
): JournalWriter {
  return new JournalWriter(new JournalCommits(db, journal), {
    queueLimit: 100,
    batchSize: 100,
    metrics: new DaemonMetrics(),
    onCommitted: () => {},
    onError: (e) => {
      throw e;
    },
    ...options,
  });
}
