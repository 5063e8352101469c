/**
 * Commits that need not wait for the disk. The store commits with `synchronous = FULL`: each commit
 * fsyncs the WAL on the event loop, a few ms on this kind of disk, during which every hook call and RPC
 * waits. Two kinds of commit need not wait for it:
 * - a live hook call's row, answered once committed (`agents/ingest/ingest.ts`) but before the fsync: a crash
 *   of the daemon cannot lose it, a power cut before the fsync can, as one before the call would;
 * - cursors stored for rows that changed nothing: a power cut makes those rows read again, to the same
 *   nothing.
 * They commit with `synchronous = NORMAL` (durable against a crash of the process, not yet against a
 * power cut), and the WAL is then fsynced on libuv's thread pool, off the event loop. The WAL is
 * written in order, so any later FULL commit (a fire, a producer's Append) makes them durable too: no
 * decision can survive a power cut that a row it was made from did not.
 */
import * as fs from "node:fs";
import type { Db } from "./open-store.js";

export class WalSync {
  private fd: number | undefined;
  private syncing: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly walPath: string,
    /** A failed fsync: the rows stay committed, and the next FULL commit or checkpoint retries. */
    private readonly onError: (e: Error) => void,
  ) {}

  /** Runs `commit` (one or more transactions) without waiting for the disk, then fsyncs off the loop. */
  unsynced<T>(commit: () => T): T {
    this.db.pragma("synchronous = NORMAL");
    try {
      return commit();
    } finally {
      this.db.pragma("synchronous = FULL");
      this.syncSoon();
    }
  }

  /** One fsync of the WAL at a time; calls during one ask for one more after it. */
  private syncSoon(): void {
    if (this.closed) return;
    if (this.syncing !== undefined) {
      this.again = true;
      return;
    }
    this.syncing = this.fsync().finally(() => {
      this.syncing = undefined;
      if (this.again) {
        this.again = false;
        this.syncSoon();
      }
    });
  }

  private async fsync(): Promise<void> {
    try {
      // Opened once: SQLite keeps the WAL file while the store is open.
      this.fd ??= fs.openSync(this.walPath, "r");
      const fd = this.fd;
      await new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => (e === null ? resolve() : reject(e))));
    } catch (e) {
      this.onError(e as Error);
    }
  }

  /** Waits for the fsync under way and closes the file; the store's close checkpoints the rest. */
  async close(): Promise<void> {
    this.closed = true;
    this.again = false;
    await this.syncing;
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
