/**
 * Waits for the evaluator's cursor to reach a row: each waiter resolves true when the cursor reaches its
 * seq, false when its budget runs out or the daemon closes. Kept in seq order, so a step settles only the
 * waiters it reached.
 */

interface Waiter {
  readonly seq: number;
  readonly resolve: (reached: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

export class EvaluationWaits {
  private waiters: Waiter[] = [];

  /** Resolves true once `reached` is told a cursor at or past `seq`, false after `budgetMs`. */
  wait(seq: number, budgetMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        resolve(false);
      }, budgetMs);
      timer.unref();
      const at = this.waiters.findIndex((w) => w.seq > seq);
      const waiter = { seq, resolve, timer };
      if (at < 0) this.waiters.push(waiter);
      else this.waiters.splice(at, 0, waiter);
    });
  }

  /** The evaluator's cursor is `cursor`: every waiter for a row at or before it is settled. */
  reached(cursor: number): void {
    let n = 0;
    while (n < this.waiters.length && (this.waiters[n] as Waiter).seq <= cursor) n++;
    if (n === 0) return;
    const done = this.waiters.slice(0, n);
    this.waiters = this.waiters.slice(n);
    for (const w of done) {
      clearTimeout(w.timer);
      w.resolve(true);
    }
  }

  /** Shutdown: every waiter left is answered false. */
  close(): void {
    const left = this.waiters;
    this.waiters = [];
    for (const w of left) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
  }
}
