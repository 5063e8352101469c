/**
 * Work taken one piece at a time, in the order asked. With the store's calls awaited (decision 0020),
 * other calls run between a read and the write it decides; what SQLite's synchronous calls made atomic
 * (nothing else ran on the event loop between them) stays so, within this process, when each piece
 * that reads and then writes takes its turn.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `turn` once every turn asked for before it has settled, whatever became of them. */
  run<T>(turn: () => Promise<T>): Promise<T> {
    const next = this.last.then(turn);
    this.last = next.catch(() => undefined);
    return next;
  }
}

/**
 * Turns per key: work that must not interleave with other work of the same key (a session's placements
 * and its stop deliveries, `agents/enforcement/run-life.ts`) runs one at a time per key in the order
 * asked, while different keys run side by side. A key holds an entry only while it has work queued or
 * running, so the map does not grow with the number of keys ever seen.
 */
export class KeyedTurns {
  /** Per key, the end of its last piece of work, whatever became of it. */
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `work` once every piece asked for before it under `key` has settled; answers what it answers.
   * With none in flight under `key` it starts at once, within the call (on SQLite its first statement
   * then runs before the caller's next line, as the synchronous call it replaces did).
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    const result = before === undefined ? work() : before.then(work);
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
