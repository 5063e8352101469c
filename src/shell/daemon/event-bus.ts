/**
 * A publisher of committed events to any number of watchers (RuleService.WatchEvents), each with its own
 * bounded buffer, so a slow watcher never blocks the publisher or grows the daemon's memory. A watcher
 * whose buffer is full misses events: from the first one missed until it has read everything buffered,
 * the bus counts instead of buffering, then hands it one gap with the exact count, in the place of what
 * it missed, and resumes. Publishing is synchronous and never waits on a watcher.
 */

/** What a watcher reads: an event, or how many events it missed at this point of the stream. */
export type Delivery<T> =
  | { readonly kind: "event"; readonly event: T }
  | { readonly kind: "gap"; readonly missed: number };

/** Events one watcher may have waiting before it starts to miss them. */
const DEFAULT_WATCH_BUFFER = 1_024;

/** Why a subscription ended; `revoked` is the subscriber's, when its watcher may no longer read. */
export type EndReason = "cancelled" | "closed" | "revoked";

export interface SubscribeOptions {
  /** Events buffered before the watcher misses them; `DEFAULT_WATCH_BUFFER` unless given. */
  readonly capacity?: number;
  /** Ends the subscription when aborted (the watcher went away). */
  readonly signal?: AbortSignal;
  /** Called once when the subscription ends, by its signal, `end()` or the bus closing. */
  readonly onEnd?: (reason: EndReason) => void;
  /** Called when the watcher starts to miss events, once until it has read the gap. */
  readonly onMiss?: () => void;
}

export class EventBus<T> {
  private readonly subscriptions = new Set<Subscription<T>>();
  private closed = false;

  /** How many watchers are subscribed; a publisher may skip building events nobody will read. */
  get watchers(): number {
    return this.subscriptions.size;
  }

  /** Offers `events`, in order, to every watcher. */
  publish(events: readonly T[]): void {
    for (const s of this.subscriptions) for (const e of events) s.offer(e);
  }

  /** Tells every watcher it missed `n` events that could not be published: they get a gap. */
  miss(n: number): void {
    for (const s of this.subscriptions) s.skip(n);
  }

  /** A new watcher, which sees every event published from now on (or a gap in its place). */
  subscribe(options: SubscribeOptions = {}): Subscription<T> {
    const capacity = options.capacity ?? DEFAULT_WATCH_BUFFER;
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a watch buffer holds at least one event, not ${capacity}`);
    const s = new Subscription<T>(
      capacity,
      (reason) => {
        this.subscriptions.delete(s);
        options.onEnd?.(reason);
      },
      options.onMiss,
    );
    if (this.closed) {
      s.end("closed");
      return s;
    }
    this.subscriptions.add(s);
    const { signal } = options;
    if (signal !== undefined) {
      if (signal.aborted) s.end("cancelled");
      else {
        const onAbort = () => s.end("cancelled");
        signal.addEventListener("abort", onAbort, { once: true });
        s.whenEnded(() => signal.removeEventListener("abort", onAbort));
      }
    }
    return s;
  }

  /** Ends every subscription (the daemon is stopping); later subscriptions end at once. */
  close(): void {
    this.closed = true;
    for (const s of [...this.subscriptions]) s.end("closed");
  }
}

/** One watcher's buffer, read with `next()` or `for await`. */
export class Subscription<T> implements AsyncIterable<Delivery<T>> {
  private readonly buffer: T[] = [];
  private head = 0;
  private missed = 0;
  private ended = false;
  private waiting: ((d: Delivery<T> | undefined) => void) | undefined;
  private readonly endListeners: (() => void)[] = [];

  constructor(
    private readonly capacity: number,
    private readonly onEnd: (reason: EndReason) => void,
    private readonly onMiss: (() => void) | undefined,
  ) {}

  private get buffered(): number {
    return this.buffer.length - this.head;
  }

  /** Deliveries ready to read without waiting: the events buffered, and a gap if one is due. */
  get ready(): number {
    return this.buffered + (this.missed > 0 ? 1 : 0);
  }

  offer(event: T): void {
    if (this.ended) return;
    const wake = this.waiting;
    if (wake !== undefined) {
      this.waiting = undefined;
      wake({ kind: "event", event });
      return;
    }
    // Once one event is missed, later ones are too until the gap is read, so the gap stands exactly
    // where the missed events would have been.
    if (this.missed > 0 || this.buffered >= this.capacity) {
      this.count(1);
      return;
    }
    this.buffer.push(event);
  }

  /** Counts `n` events as missed, as if they had overflowed the buffer. */
  skip(n: number): void {
    if (this.ended || n <= 0) return;
    const wake = this.waiting;
    if (wake !== undefined) {
      this.waiting = undefined;
      wake({ kind: "gap", missed: n });
      return;
    }
    this.count(n);
  }

  private count(n: number): void {
    if (this.missed === 0) this.onMiss?.();
    this.missed += n;
  }

  /** The next delivery, waiting for one; undefined once the subscription has ended. */
  next(): Promise<Delivery<T> | undefined> {
    const ready = this.take();
    if (ready !== undefined || this.ended) return Promise.resolve(ready);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private take(): Delivery<T> | undefined {
    if (this.buffered > 0) {
      const event = this.buffer[this.head] as T;
      this.head++;
      // Compact now and then rather than shifting on every read.
      if (this.head >= 256 && this.head * 2 >= this.buffer.length) {
        this.buffer.splice(0, this.head);
        this.head = 0;
      }
      return { kind: "event", event };
    }
    if (this.missed > 0) {
      const missed = this.missed;
      this.missed = 0;
      return { kind: "gap", missed };
    }
    return undefined;
  }

  /** Stops delivering and frees the buffer; what is buffered is dropped. */
  end(reason: EndReason): void {
    if (this.ended) return;
    this.ended = true;
    this.buffer.length = 0;
    this.head = 0;
    this.missed = 0;
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.(undefined);
    for (const l of this.endListeners) l();
    this.onEnd(reason);
  }

  whenEnded(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Delivery<T>> {
    try {
      for (;;) {
        const d = await this.next();
        if (d === undefined) return;
        yield d;
      }
    } finally {
      this.end("cancelled");
    }
  }
}
