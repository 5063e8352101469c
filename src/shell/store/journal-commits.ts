/**
 * What the journal writer (`../journal/journal-writer.ts`) commits through: the journal's rows and the
 * Append keys stored beside them, a batch at a time in one `BEGIN IMMEDIATE` transaction, so a batch
 * and its keys commit whole or not at all.
 */
import { JournalAppends } from "./journal-appends.js";
import { JournalTable } from "./journal-table.js";
import type { Db } from "./open-store.js";

export class JournalCommits {
  readonly appends: JournalAppends;

  constructor(
    private readonly db: Db,
    /** The journal the daemon reads too; one of its own when none is given. */
    readonly journal: JournalTable = new JournalTable(db),
  ) {
    this.appends = new JournalAppends(db);
  }

  /** Runs `work` in one `BEGIN IMMEDIATE` transaction: it all commits, or it throws and none of it does. */
  commit<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }
}
