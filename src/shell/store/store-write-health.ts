/**
 * Whether the store can write, as its last writes found: the failure of the last write while no later
 * write succeeded (a full disk, a read-only file), which `harness doctor` fails on, naming the store and
 * the error. The journal's batches are the writes it watches: the ticker offers one each minute, so a
 * store that can write again is seen within the minute.
 */
export interface StoreWriteFailure {
  readonly path: string;
  /** SQLite's or the system's error, as the failed write got it. */
  readonly error: string;
  /** When the first of the failing writes failed, ms. */
  readonly sinceMs: number;
  /** Writes failed since then. */
  readonly failures: number;
}

export class StoreWriteHealth {
  private failure: StoreWriteFailure | undefined;

  constructor(
    readonly path: string,
    private readonly clock: () => number,
  ) {}

  failed(error: Error): void {
    this.failure = {
      path: this.path,
      error: error.message,
      sinceMs: this.failure?.sinceMs ?? this.clock(),
      failures: (this.failure?.failures ?? 0) + 1,
    };
  }

  succeeded(): void {
    this.failure = undefined;
  }

  /** The failure in force, or undefined while the last write succeeded. */
  get current(): StoreWriteFailure | undefined {
    return this.failure;
  }
}
