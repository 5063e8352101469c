/**
 * A journal query worker, a child process (`support/process-worker.ts` says why not a thread):
 * `JournalQueries` over its own read-only connection to the store, so a scan of a million rows never
 * holds the daemon's event loop. It answers one job at a time, in the order the pool posts them, and
 * lives until the pool terminates it (or the daemon goes away).
 */
import { InvalidArgumentError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { Stores } from "../store/stores.js";
import { workerPort } from "../support/process-worker.js";
import { JournalQueries } from "./journal-queries.js";
import type { QueryJob, QueryReply, QueryWorkerInput } from "./journal-query-pool.js";

const port = await workerPort<QueryWorkerInput>();
const stores = new Stores(openStoreReadOnly(port.workerData.storePath));
const queries = new JournalQueries(stores.journalQueries, stores.journal);

port.onMessage((job: QueryJob) => {
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
  port.postMessage(reply);
});
