/** A journal writer for tests that drive it by hand: nothing to tell after a commit, and a failed one thrown. */
import { JournalWriter, type JournalWriterOptions } from "../../../src/shell/journal/journal-writer.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import type { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { SqliteJournalLog, type Unsynced } from "../../../src/shell/store/sqlite-write-ports.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";

export function testWriter(
  db: Db,
  journal: JournalTable,
  options: Pick<JournalWriterOptions, "clock"> &
    Partial<JournalWriterOptions> & { readonly unsynced?: Unsynced },
): JournalWriter {
  const { unsynced, ...writerOptions } = options;
  return new JournalWriter(new SqliteJournalLog(new JournalCommits(db, journal), unsynced), {
    queueLimit: 100,
    batchSize: 100,
    metrics: new DaemonMetrics(),
    onCommitted: () => {},
    onError: (e) => {
      throw e;
    },
    ...writerOptions,
  });
}
