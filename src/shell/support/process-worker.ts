/**
 * A worker in a child process, with the part of `worker_threads`' `Worker` the daemon's pools use
 * (`postMessage`, `message`/`error`/`exit`, `terminate`), and the child's side of it (`workerPort`).
 *
 * Why not a worker thread: better-sqlite3 12 (the line that runs on Node 20) aborts the whole process on
 * Node 24 when one of its statements is collected in a worker thread (V8's `location_ != nullptr`
 * check; a collection forced in the worker made `harness demo` abort every run). A child process is a
 * main thread of its own, where collection is safe on every line. Messages use Node's advanced
 * serialization, the structured clone a worker thread's messages use. A child whose parent goes away
 * (its IPC channel closes) exits.
 */
import { type ChildProcess, fork } from "node:child_process";
import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";

/** The first message a child receives: its input, as `workerData` would be. */
interface Start {
  readonly workerData: unknown;
}

export class ProcessWorker extends EventEmitter {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(url: URL, workerData: unknown) {
    super();
    this.child = fork(fileURLToPath(url), [], {
      serialization: "advanced",
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.on("message", (m: unknown) => this.emit("message", m));
    this.child.on("error", (e: Error) => this.emit("error", e));
    this.child.once("exit", (code) => this.emit("exit", code ?? 1));
    this.child.send({ workerData } satisfies Start);
  }

  postMessage(message: unknown): void {
    if (this.child.connected) this.child.send(message as object);
  }

  /** Kills the child at once and resolves when it has gone. */
  async terminate(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** The child's side: its input, the messages after it, and a way to post back. */
export interface WorkerPort<T> {
  readonly workerData: T;
  postMessage(message: unknown): void;
  /** The one listener of the messages after the input. */
  onMessage(listener: (message: never) => void): void;
}

/** Waits for the parent's first message (the input), then hands over the rest as they come. */
export function workerPort<T>(): Promise<WorkerPort<T>> {
  process.once("disconnect", () => process.exit(0));
  return new Promise((resolve) => {
    let listener: ((m: never) => void) | undefined;
    // Messages that come before the child's module has listened (the parent posts at once) wait here.
    const early: unknown[] = [];
    let started = false;
    process.on("message", (m: unknown) => {
      if (started) {
        if (listener === undefined) early.push(m);
        else listener(m as never);
        return;
      }
      started = true;
      resolve({
        workerData: (m as Start).workerData as T,
        postMessage: (message) => process.send?.(message as object),
        onMessage: (l) => {
          listener = l;
          for (const m of early.splice(0)) l(m as never);
        },
      });
    });
  });
}
