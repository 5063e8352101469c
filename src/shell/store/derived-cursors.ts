/**
 * Each daemon-derived row producer's cursor (`../derive/`): the seq of the last journal row it has
 * derived from, written in the transaction that commits the rows it derived.
 */
import type { Db } from "./open-store.js";

export class DerivedCursors {
  private readonly getStmt;
  private readonly setStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare("SELECT cursor FROM derived_cursors WHERE name = ?");
    this.setStmt = db.prepare(
      "INSERT INTO derived_cursors (name, cursor) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor",
    );
  }

  /** The producer's cursor, or undefined before its first commit. */
  get(name: string): number | undefined {
    return (this.getStmt.get(name) as { cursor: number } | undefined)?.cursor;
  }

  /** Inside the caller's transaction. */
  set(name: string, cursor: number): void {
    this.setStmt.run(name, cursor);
  }
}
