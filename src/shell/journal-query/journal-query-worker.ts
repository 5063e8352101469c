/**
 * A journal query worker thread: `JournalQueries` over its own read-only connection to the store, so a
 * scan of a million rows never holds the daemon's event loop. It answers one job
 * at a time, in the order the pool posts them, and lives until the pool terminates it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { InvalidArgumentError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { Stores } from "../store/stores.js";
import { JournalQueries } from "./journal-queries.js";
import type { QueryJob, QueryReply, QueryWorkerInput } from "./journal-query-pool.js";

const { storePath } = workerData as QueryWorkerInput;
const stores = new Stores(openStoreReadOnly(storePath));
const queries = new JournalQueries(stores.journalQueries, stores.journal);

parentPort?.on("message", (job: QueryJob) => {
  let reply: QueryReply;
  try {
    reply =
      job.op === "query"
        ? { id: job.id, ok: true, answer: queries.query(job.req, job.scope) }
        : { id: job.id, ok: true, answer: queries.count(job.req, job.scope) };
  } catch (e) {
    reply =
      e instanceof InvalidArgumentError
        ? { id: job.id, ok: false, invalid: true, subject: e.subject, message: e.message }
        : { id: job.id, ok: false, invalid: false, subject: "", message: (e as Error).message };
  }
  parentPort?.postMessage(reply);
});
