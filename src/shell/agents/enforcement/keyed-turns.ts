/**
 * Work that must not interleave with other work of the same key (a session's placements and its stop
 * deliveries, `run-life.ts`), run one at a time per key in the order asked, while different keys run
 * side by side. Each piece reads the store and may write it between awaits; on SQLite's synchronous
 * calls nothing could run in between, on asynchronous ports something can, unless it waits its turn.
 * A key holds an entry only while it has work queued or running, so the map does not grow with the
 * number of sessions ever seen.
 */
export class KeyedTurns {
  /** Per key, the end of its last piece of work, whatever became of it. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` once every piece asked for before it under `key` has settled; answers what it answers. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(idle, idle);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** How many keys have work queued or running. */
  get busy(): number {
    return this.tails.size;
  }
}

const idle = (): void => {};
