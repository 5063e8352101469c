/**
 * The store's `journal_appends`: the idempotency key of each Append batch, per source, with the answer
 * its events got. Written inside the writer's transaction, beside the batch's rows, so a key is stored
 * exactly when its rows are, and a crash between commit and answer leaves the answer to be repeated.
 */
import type { Db } from "./open-store.js";

/** How long a key is kept: a retry comes within seconds; an hour leaves room for a slow restart. */
export const APPEND_KEY_TTL_MS = 60 * 60 * 1000;

export class JournalAppends {
  private readonly select;
  private readonly insert;
  private readonly prune;

  constructor(db: Db) {
    this.select = db.prepare<[string, string], { answer: string }>(
      "SELECT answer FROM journal_appends WHERE source = ? AND key = ?",
    );
    this.insert = db.prepare<[string, string, string, number]>(
      "INSERT INTO journal_appends (source, key, answer, created_at) VALUES (?, ?, ?, ?)",
    );
    this.prune = db.prepare<[number]>("DELETE FROM journal_appends WHERE created_at < ?");
  }

  /** The answer stored for the key, or undefined. */
  answer(source: string, key: string): string | undefined {
    return this.select.get(source, key)?.answer;
  }

  /** Stores the key's answer and deletes the keys older than the TTL, in the caller's transaction. */
  record(source: string, key: string, answer: string, at: number): void {
    this.prune.run(at - APPEND_KEY_TTL_MS);
    this.insert.run(source, key, answer, at);
  }
}
