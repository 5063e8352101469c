/** A journal writer for tests that drive it by hand: nothing to tell after a commit, and a failed one thrown. */
import { JournalWriter, type JournalWriterOptions } from "../../../src/shell/journal/journal-writer.js";
import { AgentRunStops } from "../../../src/shell/store/agent-run-stops.js";
import { DerivedCursors } from "../../../src/shell/store/derived-cursors.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import type { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { SqliteJournalLog, type Unsynced } from "../../../src/shell/store/sqlite-write-ports.js";
import { TokenStore } from "../../../src/shell/store/token-store.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";

export function testWriter(
  db: Db,
  journal: JournalTable,
  options: Pick<JournalWriterOptions, "clock"> &
    Partial<JournalWriterOptions> & { readonly unsynced?: Unsynced },
): JournalWriter {
  const { unsynced, ...writerOptions } = options;
  const derived = {
    cursors: new DerivedCursors(db),
    stops: new AgentRunStops(db),
    tokens: new TokenStore(db),
  };
  return new JournalWriter(new SqliteJournalLog(new JournalCommits(db, journal), derived, unsynced), {
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
