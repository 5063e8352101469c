/**
 * A journal query worker, a child process (`support/process-worker.ts` says why not a thread):
 * `JournalQueries` over its own read-only connection to the store (`PgJournalQueries` on PostgreSQL),
 * so a scan of a million rows never holds the daemon's event loop. It answers one job at a time, in the
 * order the pool posts them, and lives until the pool terminates it (or the daemon goes away).
 */
import { InvalidArgumentError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { openPgReadOnly } from "../store/pg/open-pg-store.js";
import { pgPoolConfigOf } from "../store/pg/pg-config.js";
import { PgJournal } from "../store/pg/pg-journal.js";
import { PgJournalQueryReads } from "../store/pg/pg-journal-query-reads.js";
import { Stores } from "../store/stores.js";
import { workerPort } from "../support/process-worker.js";
import { Turns } from "../support/turns.js";
import { type CountAnswer, JournalQueries, type QueryAnswer } from "./journal-queries.js";
import {
  QUERY_TIMEOUT_MS,
  type QueryJob,
  type QueryReply,
  type QueryWorkerInput,
} from "./journal-query-pool.js";
import { PgJournalQueries } from "./pg-journal-queries.js";

const port = await workerPort<QueryWorkerInput>();
const { store } = port.workerData;

/** Answers a job: at once on SQLite, a round trip or three on PostgreSQL. */
const answerOf = ((): ((job: QueryJob) => QueryAnswer | CountAnswer | Promise<QueryAnswer | CountAnswer>) => {
  if (store.backend === "sqlite") {
    const stores = new Stores(openStoreReadOnly(store.path));
    const queries = new JournalQueries(stores.journalQueries, stores.journal);
    return (job) =>
      job.op === "query" ? queries.query(job.req, job.scope) : queries.count(job.req, job.scope);
  }
  // The server cancels a scan the pool has given up on, rather than running it on for nobody.
  const { pool } = openPgReadOnly(pgPoolConfigOf(store.config), {
    max: 1,
    statementTimeoutMs: QUERY_TIMEOUT_MS,
  });
  const queries = new PgJournalQueries(new PgJournalQueryReads(pool), new PgJournal(pool));
  return (job) =>
    job.op === "query" ? queries.query(job.req, job.scope) : queries.count(job.req, job.scope);
})();

// One job at a time, in order: the next waits for the one before, as the pool expects.
const turns = new Turns();
port.onMessage((job: QueryJob) => {
  void turns.run(async () => {
    let reply: QueryReply;
    try {
      reply = { id: job.id, ok: true, answer: await answerOf(job) };
    } catch (e) {
      reply =
        e instanceof InvalidArgumentError
          ? { id: job.id, ok: false, invalid: true, subject: e.subject, message: e.message }
          : { id: job.id, ok: false, invalid: false, subject: "", message: (e as Error).message };
    }
    port.postMessage(reply);
  });
});
