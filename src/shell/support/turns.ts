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
