/**
 * A backtest over the journal on PostgreSQL (issue 34 item 3): the same replay as over SQLite
 * (`replay.ts`), its rows streamed from one read-only snapshot through a server-side cursor a page at
 * a time, so a month of journal is never held. It writes nothing.
 */
import type pg from "pg";
import { PgJournalSnapshot, STREAM_PAGE } from "../store/pg/pg-journal-reads.js";
import { type BacktestRequest, type BacktestSink, replayStreamed } from "./replay.js";

/** Replays `request` over the journal of `pool`'s database; `page` rows fetched per round trip. */
export async function replayOnPg(
  pool: pg.Pool,
  request: BacktestRequest,
  sink: BacktestSink,
  page = STREAM_PAGE,
): Promise<void> {
  const snapshot = await PgJournalSnapshot.open(pool);
  try {
    await replayStreamed(
      {
        firstAdmittedAfter: (at) => snapshot.firstAdmittedAfter(at),
        last: () => snapshot.last(),
        rowsInRangeTyped: (from, to, readsEvent, columns, decodable) =>
          snapshot.rowsInRangeTyped(from, to, readsEvent, columns, decodable, page),
      },
      request,
      sink,
    );
  } finally {
    await snapshot.close();
  }
}
