/**
 * Where the daemon runs the journal reads of the MCP gateway's query_journal and count_journal and of
 * JournalQueryService: in two worker processes (`support/process-worker.ts`), each with its own read-only
 * connection (to the SQLite file, or to PostgreSQL), so a scan never stalls admission, hook answers or another client's call. What a scan may
 * cost is bounded before it runs: a call waits in a queue of at most `MAX_WAITING_QUERIES`, one caller
 * (a gateway session) has at most `MAX_QUERIES_PER_CALLER` in flight or waiting, and a call running
 * past `QUERY_TIMEOUT_MS` has its worker terminated (a fresh one takes its place). Past a bound the call
 * is refused at once, RESOURCE_EXHAUSTED, rather than left to wait.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { StoreLocation } from "../config/store-location.js";
import { InvalidArgumentError } from "../errors.js";
import { ProcessWorker } from "../support/process-worker.js";
import type { CountAnswer, CountRequest, QueryAnswer, QueryRequest, Scope } from "./journal-queries.js";

/** Workers, each running one scan at a time. */
export const QUERY_WORKERS = 2;
/** Calls waiting for a worker, in total. */
export const MAX_WAITING_QUERIES = 16;
/** Calls one caller may have running or waiting. */
export const MAX_QUERIES_PER_CALLER = 2;
/** A scan running longer than this is stopped and its caller told to narrow it. */
export const QUERY_TIMEOUT_MS = 30_000;

export interface QueryWorkerInput {
  readonly store: StoreLocation;
}

export type QueryJob =
  | { readonly id: number; readonly op: "query"; readonly req: QueryRequest; readonly scope?: Scope }
  | { readonly id: number; readonly op: "count"; readonly req: CountRequest; readonly scope?: Scope };

export type QueryReply =
  | { readonly id: number; readonly ok: true; readonly answer: QueryAnswer | CountAnswer }
  | {
      readonly id: number;
      readonly ok: false;
      /** An `InvalidArgumentError`: the caller's to fix. */
      readonly invalid: boolean;
      readonly subject: string;
      readonly message: string;
    };

/** The journal reads the gateway and JournalQueryService call; `caller` keys the per-caller bound. */
export interface JournalReads {
  query(req: QueryRequest, scope?: Scope, caller?: object): Promise<QueryAnswer>;
  count(req: CountRequest, scope?: Scope, caller?: object): Promise<CountAnswer>;
}

/** The pool's counts, for its metric and tests. */
export interface PoolCounts {
  readonly running: number;
  readonly waiting: number;
}

type JobSpec =
  | { readonly op: "query"; readonly req: QueryRequest }
  | { readonly op: "count"; readonly req: CountRequest };

interface Pending {
  readonly job: QueryJob;
  readonly caller: object | undefined;
  readonly resolve: (answer: QueryAnswer | CountAnswer) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  worker: ProcessWorker | undefined;
  job: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** The worker's module beside this one: compiled `.js`, or `.ts` when the daemon runs from source. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./journal-query-worker.ts" : "./journal-query-worker.js",
  import.meta.url,
);

const busy = (why: string): ConnectError =>
  new ConnectError(
    `the daemon's journal reads are busy: ${why}; call again when one has answered`,
    Code.ResourceExhausted,
  );

export class JournalQueryPool implements JournalReads {
  private readonly slots: Slot[] = Array.from({ length: QUERY_WORKERS }, () => ({
    worker: undefined,
    job: undefined,
    timer: undefined,
  }));
  private readonly waiting: Pending[] = [];
  private readonly perCaller = new Map<object, number>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly store: StoreLocation,
    /** Told of each call refused at once, by why. */
    private readonly refused: (reason: "queue_full" | "caller_busy" | "timeout") => void = () => {},
  ) {}

  get counts(): PoolCounts {
    return { running: this.slots.filter((s) => s.job !== undefined).length, waiting: this.waiting.length };
  }

  query(req: QueryRequest, scope?: Scope, caller?: object): Promise<QueryAnswer> {
    return this.submit({ op: "query", req }, scope, caller) as Promise<QueryAnswer>;
  }

  count(req: CountRequest, scope?: Scope, caller?: object): Promise<CountAnswer> {
    return this.submit({ op: "count", req }, scope, caller) as Promise<CountAnswer>;
  }

  /** Stops the workers; calls in flight or waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.waiting.splice(0)) p.reject(busy("the daemon is stopping"));
    await Promise.all(
      this.slots.map(async (s) => {
        const worker = s.worker;
        s.worker = undefined;
        if (s.timer !== undefined) clearTimeout(s.timer);
        s.job?.reject(busy("the daemon is stopping"));
        s.job = undefined;
        await worker?.terminate();
      }),
    );
  }

  private submit(
    spec: JobSpec,
    scope: Scope | undefined,
    caller: object | undefined,
  ): Promise<QueryAnswer | CountAnswer> {
    if (this.closed) return Promise.reject(busy("the daemon is stopping"));
    const mine = caller === undefined ? 0 : (this.perCaller.get(caller) ?? 0);
    if (mine >= MAX_QUERIES_PER_CALLER) {
      this.refused("caller_busy");
      return Promise.reject(
        busy(`this session has ${MAX_QUERIES_PER_CALLER} journal reads running or waiting`),
      );
    }
    const free = this.slots.some((s) => s.job === undefined);
    if (!free && this.waiting.length >= MAX_WAITING_QUERIES) {
      this.refused("queue_full");
      return Promise.reject(busy(`${MAX_WAITING_QUERIES} journal reads are waiting already`));
    }
    if (caller !== undefined) this.perCaller.set(caller, mine + 1);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const job = { id, ...spec, ...(scope === undefined ? {} : { scope }) } as QueryJob;
      const settle = () => {
        if (caller === undefined) return;
        const n = (this.perCaller.get(caller) ?? 1) - 1;
        if (n === 0) this.perCaller.delete(caller);
        else this.perCaller.set(caller, n);
      };
      this.waiting.push({
        job,
        caller,
        resolve: (a) => {
          settle();
          resolve(a);
        },
        reject: (e) => {
          settle();
          reject(e);
        },
      });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job !== undefined) continue;
      const next = this.waiting.shift();
      if (next === undefined) return;
      this.run(slot, next);
    }
  }

  private run(slot: Slot, pending: Pending): void {
    slot.job = pending;
    const worker = slot.worker ?? this.spawn(slot);
    slot.timer = setTimeout(() => {
      this.refused("timeout");
      this.fail(
        slot,
        new InvalidArgumentError(
          "selector",
          `the scan ran longer than ${QUERY_TIMEOUT_MS / 1000}s and was stopped; narrow it (a harness, a type) or shorten the window`,
        ),
      );
    }, QUERY_TIMEOUT_MS);
    worker.postMessage(pending.job);
  }

  private spawn(slot: Slot): ProcessWorker {
    const worker = new ProcessWorker(WORKER_URL, { store: this.store } satisfies QueryWorkerInput);
    slot.worker = worker;
    worker.on("message", (reply: QueryReply) => {
      const pending = slot.job;
      if (pending === undefined || pending.job.id !== reply.id) return;
      this.finish(slot);
      if (reply.ok) pending.resolve(reply.answer);
      else
        pending.reject(
          reply.invalid ? new InvalidArgumentError(reply.subject, reply.message) : new Error(reply.message),
        );
      this.dispatch();
    });
    worker.on("error", (e: Error) =>
      this.fail(slot, new Error(`the journal query worker failed: ${e.message}`)),
    );
    worker.on("exit", () => {
      if (slot.worker === worker) this.fail(slot, new Error("the journal query worker exited"));
    });
    return worker;
  }

  private finish(slot: Slot): void {
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
  }

  /** Ends the slot's call with `e` and its worker with it; the next call gets a fresh worker. */
  private fail(slot: Slot, e: Error): void {
    const pending = slot.job;
    const worker = slot.worker;
    slot.worker = undefined;
    this.finish(slot);
    void worker?.terminate();
    pending?.reject(e);
    if (!this.closed) this.dispatch();
  }
}
