/**
 * The delivery half of notify, as the supervisor runs it: `offer` never blocks the evaluator. It
 * applies the event filter and the per-(harness, event, rule) cooldown, then queues the delivery for a
 * small pool of hook runs, dropping (and reporting) when the queue is full, because a slow hook must
 * never back up the loop that reported the fire. Each delivery runs the hook once and is never retried:
 * at most once, like every action. Every offer of a wanted event gets exactly one outcome. The
 * cooldowns live in a `CooldownStore` the caller supplies (the daemon's is its store), so they outlast
 * the notifier; its calls are asynchronous, and the offers that need them take turns (`offer`).
 */
import * as os from "node:os";
import { formatDuration } from "../../core/durations.js";
import { redact } from "../../core/redact.js";
import { checkCommand, type NotifyConfig, type NotifyEventName } from "./config.js";
import type { CooldownKey, CooldownStore } from "./cooldown-store.js";
import { type HookResult, runOperatorCommand } from "./hook-process.js";
import { buildPayload, hookEnv, type NotifyEvent } from "./payload.js";

/** The `result` label of `harness_notify_deliveries_total`. */
export type NotifyResult = HookResult | "dropped" | "suppressed";

export interface NotifyOutcomeDetail {
  /** The event as offered, for the store (its fire id) and the log line. */
  readonly notification: NotifyEvent;
  /** Why, for every result but ok. */
  readonly reason: string;
  /** The redacted tail of the hook's output; "" when the hook did not run. */
  readonly output: string;
  /** 0 when the hook did not run. */
  readonly durationMs: number;
}

/**
 * Called once per outcome: from `offer` for an event dropped at once, when its cooldown has been read
 * for one suppressed or dropped then, later for the rest. It must not throw: nothing between a hook's
 * exit (or the store's answer) and the event loop could catch it.
 */
export type OnOutcome = (event: NotifyEventName, result: NotifyResult, detail: NotifyOutcomeDetail) => void;

export interface NotifierDeps {
  readonly onOutcome: OnOutcome;
  /**
   * Called just before the hook is spawned for an event, so the caller can tell a delivery that may
   * have run from one still queued; the spawn waits for what it returns (the caller's record of it).
   * `false` keeps the hook from being spawned, with no outcome reported: the caller may no longer act
   * (its daemon lost the lead). Like `onOutcome`, it must not throw or reject.
   */
  readonly onStart?: (event: NotifyEvent) => boolean | undefined | Promise<boolean | undefined>;
  readonly cooldowns: CooldownStore;
  /**
   * A `cooldowns` call failed. The event is delivered anyway: a repeat is better than an operator never
   * told. Like `onOutcome`, it must not throw.
   */
  readonly onCooldownError: (err: Error) => void;
  /** The cooldown's clock, ms (default Date.now). */
  readonly now?: () => number;
  /** The machine every payload names (default os.hostname()). */
  readonly host?: string;
  /** The environment the hook inherits, less `HARNESS_NOTIFY_*` (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

/** A delivery accepted by `offer`: the event and the hook it goes to. */
interface Job {
  readonly event: NotifyEvent;
  readonly argv: readonly string[];
}

const cooldownKey = (e: NotifyEvent): CooldownKey => ({ harness: e.harness, event: e.event, rule: e.rule });

function integerAtLeast(name: string, n: number, min: number): void {
  if (!Number.isInteger(n) || n < min) throw new RangeError(`notify ${name} must be an integer ≥ ${min}`);
}

export class Notifier {
  private readonly onOutcome: OnOutcome;
  private readonly onStart: (event: NotifyEvent) => boolean | undefined | Promise<boolean | undefined>;
  private readonly cooldowns: CooldownStore;
  private readonly onCooldownError: (err: Error) => void;
  private readonly now: () => number;
  private readonly host: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly wanted: ReadonlySet<NotifyEventName>;
  /** Deliveries accepted and not yet started, oldest first. */
  private readonly queue: Job[] = [];
  /** The offers waiting on their cooldown, one after the other (`offer`). */
  private cooldownTurns: Promise<void> = Promise.resolve();
  /** How many offers wait in `cooldownTurns` (`drain` waits for them). */
  private checking = 0;
  private readonly stop = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private running = 0;
  private pumpScheduled = false;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private closed = false;

  /** Throws `NotifyConfigError` for a command it could not exec, `RangeError` for a nonsensical size. */
  constructor(
    private readonly config: NotifyConfig,
    deps: NotifierDeps,
  ) {
    checkCommand(config.command);
    integerAtLeast("timeoutMs", config.timeoutMs, 1);
    integerAtLeast("cooldownMs", config.cooldownMs, 0);
    integerAtLeast("workers", config.workers, 1);
    integerAtLeast("queueSize", config.queueSize, 1);
    this.onOutcome = deps.onOutcome;
    this.onStart = deps.onStart ?? (() => undefined);
    this.cooldowns = deps.cooldowns;
    this.onCooldownError = deps.onCooldownError;
    this.now = deps.now ?? Date.now;
    this.host = deps.host ?? (os.hostname() || "unknown");
    this.env = deps.env ?? process.env;
    this.wanted = new Set(config.events);
  }

  /**
   * Queues `e` for the hook and returns at once; the hook is started from the event loop, never
   * inside `offer`. Without a command, or for an event not in `events`, it does nothing and reports
   * nothing, as the supervisor does: `suppressed` means "held by the cooldown", and counting events
   * the operator never asked for would read as notifications lost.
   *
   * With a cooldown, offers take turns in offer order: each one's check of its key and its stamp run
   * with no other offer's between them, so two of one key offered together deliver once, and the
   * queue keeps the order of the offers.
   */
  offer(e: NotifyEvent): void {
    const argv = this.config.command;
    if (argv === undefined || !this.wanted.has(e.event)) return;
    if (this.closed) {
      this.report(e, "dropped", "the notifier is closed");
      return;
    }
    if (this.config.cooldownMs === 0) {
      if (!this.queueFull(e)) this.enqueue({ event: e, argv });
      return;
    }
    const now = this.now();
    this.checking++;
    this.cooldownTurns = this.cooldownTurns
      .then(() => this.offerInCooldown({ event: e, argv }, now))
      .finally(() => {
        this.checking--;
        this.wakeIfIdle();
      });
  }

  /** An offer's turn: the cooldown checked, then stamped unless the event is suppressed or dropped. */
  private async offerInCooldown(job: Job, now: number): Promise<void> {
    const { cooldownMs } = this.config;
    const key = cooldownKey(job.event);
    const last = await this.cooldownCall(() => this.cooldowns.lastSent(key));
    // A clock that stepped back delivers rather than staying silent until it catches up.
    if (last !== undefined && now >= last && now - last < cooldownMs) {
      this.report(job.event, "suppressed", `inside the ${formatDuration(cooldownMs)} cooldown`);
      return;
    }
    // Checked after the cooldown and before stamping it: a dropped event must not hold back the next.
    if (this.queueFull(job.event)) return;
    await this.sweep(now);
    await this.cooldownCall(() => this.cooldowns.recordSent(key, now));
    this.enqueue(job);
  }

  /** Whether the queue is full, the event then reported dropped. */
  private queueFull(e: NotifyEvent): boolean {
    const { queueSize } = this.config;
    if (this.queue.length < queueSize) return false;
    this.report(e, "dropped", `the queue is full (${queueSize})`);
    return true;
  }

  private enqueue(job: Job): void {
    this.queue.push(job);
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(this.pump);
    }
  }

  /** Resolves once no offer waits on its cooldown, the queue is empty and no hook runs. */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops accepting, lets the offers already made take their turn at the cooldown, drops what is
   * queued and kills every running hook (reported `error`); resolves once all of them are reported.
   * `drain` first for a graceful stop.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.cooldownTurns;
    for (const job of this.queue.splice(0)) this.report(job.event, "dropped", "the notifier closed");
    this.stop.abort();
    return this.drain();
  }

  private idle(): boolean {
    return this.checking === 0 && this.queue.length === 0 && this.running === 0;
  }

  private wakeIfIdle(): void {
    if (this.idle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private readonly pump = (): void => {
    this.pumpScheduled = false;
    while (this.running < this.config.workers) {
      const job = this.queue.shift();
      if (job === undefined) break;
      this.running++;
      void this.deliver(job).finally(() => {
        this.running--;
        this.pump();
        this.wakeIfIdle();
      });
    }
  };

  private async deliver({ event: e, argv }: Job): Promise<void> {
    const payload = buildPayload(e, this.host);
    if ((await this.onStart(e)) === false) return;
    const outcome = await runOperatorCommand({
      argv,
      input: JSON.stringify(payload),
      env: hookEnv(this.env, payload),
      timeoutMs: this.config.timeoutMs,
      signal: this.stop.signal,
    });
    this.report(e, outcome.result, outcome.reason, redact(outcome.output), outcome.durationMs);
  }

  /** Forgets cooldowns that have run out, at most once a cooldown period, so the store stays bounded. */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < this.config.cooldownMs) return;
    this.lastSweep = now;
    await this.cooldownCall(() => this.cooldowns.forgetSentBy(now - this.config.cooldownMs));
  }

  /** `call`'s result, or undefined when it failed: the offer goes on as if no cooldown were known. */
  private async cooldownCall<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      this.onCooldownError(err instanceof Error ? err : new Error(String(err)));
      return undefined;
    }
  }

  private report(e: NotifyEvent, result: NotifyResult, reason: string, output = "", durationMs = 0): void {
    this.onOutcome(e.event, result, { notification: e, reason, output, durationMs });
  }
}
