/**
 * The `[notify]` table as the notifier runs it, with the supervisor's defaults and bounds (see
 * `../shared/harness-context.md`, "Notifications"). Durations are whole milliseconds: the config loader
 * parses the operator's text (`15s`, `1h`) and passes the numbers through `notifyConfig`, which applies
 * the operator-facing bounds; the `Notifier` itself checks only what it needs to run, so tests can use
 * hooks with sub-second timeouts.
 */
import * as path from "node:path";
import { DAY, MINUTE, type Millis } from "../../core/durations.js";

/** The events this engine sends to the hook: the values of `events` and `HARNESS_NOTIFY_EVENT`. */
export const NOTIFY_EVENTS = ["rule_fired", "rule_hold", "rule_hold_released"] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

export interface NotifyConfig {
  /** The hook's argv, argv[0] absolute, run without a shell; undefined = no hook configured. */
  readonly command: readonly string[] | undefined;
  /** One delivery's bound: the hook's process group is killed when it passes. */
  readonly timeoutMs: Millis;
  /** A repeat of the same (harness, event, rule) inside it is suppressed; 0 turns it off. */
  readonly cooldownMs: Millis;
  /** The events that run the hook. */
  readonly events: readonly NotifyEventName[];
  /** Hooks running at once. */
  readonly workers: number;
  /** Deliveries waiting for a worker; one more is dropped. */
  readonly queueSize: number;
}

export const DEFAULT_NOTIFY_CONFIG: NotifyConfig = {
  command: undefined,
  timeoutMs: 15_000,
  cooldownMs: 15 * MINUTE,
  events: NOTIFY_EVENTS,
  workers: 4,
  queueSize: 64,
};

/** What an operator may write for `timeout` and `cooldown`. */
export const NOTIFY_BOUNDS = {
  timeoutMs: { min: 1_000, max: 5 * MINUTE },
  cooldownMs: { min: 0, max: DAY },
} as const;

/** A `[notify]` value that cannot run; `key` names it as the operator wrote it. */
export class NotifyConfigError extends Error {
  constructor(
    readonly key: "command" | "timeout" | "cooldown" | "events",
    message: string,
  ) {
    super(`[notify] ${key}: ${message}`);
    this.name = "NotifyConfigError";
  }
}

/** Refuses an argv the notifier could not exec as the supervisor does: without a shell, from any PATH. */
export function checkCommand(command: readonly string[] | undefined): void {
  if (command === undefined) return;
  const argv0 = command[0];
  if (argv0 === undefined || argv0.trim() === "")
    throw new NotifyConfigError("command", "argv[0] must name the hook executable");
  if (!path.isAbsolute(argv0))
    throw new NotifyConfigError(
      "command",
      `argv[0] must be an absolute path (got ${JSON.stringify(argv0)}): the hook is run without a shell, from the daemon's environment`,
    );
}

/** The operator's `[notify]` values, already parsed, over the defaults and within the bounds. */
export function notifyConfig(table: {
  readonly command?: readonly string[];
  readonly timeoutMs?: Millis;
  readonly cooldownMs?: Millis;
  readonly events?: readonly string[];
}): NotifyConfig {
  checkCommand(table.command);
  const within = (key: "timeout" | "cooldown", ms: Millis, b: { min: number; max: number }): Millis => {
    if (!Number.isInteger(ms) || ms < b.min || ms > b.max)
      throw new NotifyConfigError(key, `must be between ${b.min} ms and ${b.max} ms (got ${ms})`);
    return ms;
  };
  return {
    ...DEFAULT_NOTIFY_CONFIG,
    command: table.command,
    timeoutMs: within("timeout", table.timeoutMs ?? DEFAULT_NOTIFY_CONFIG.timeoutMs, NOTIFY_BOUNDS.timeoutMs),
    cooldownMs: within(
      "cooldown",
      table.cooldownMs ?? DEFAULT_NOTIFY_CONFIG.cooldownMs,
      NOTIFY_BOUNDS.cooldownMs,
    ),
    events: table.events === undefined ? DEFAULT_NOTIFY_CONFIG.events : checkEvents(table.events),
  };
}

function checkEvents(events: readonly string[]): readonly NotifyEventName[] {
  const known = NOTIFY_EVENTS.join(", ");
  // An explicit empty list is refused rather than read as "notify about nothing": omit the key instead.
  if (events.length === 0) throw new NotifyConfigError("events", `must list at least one of ${known}`);
  const out: NotifyEventName[] = [];
  for (const e of events) {
    if (!(NOTIFY_EVENTS as readonly string[]).includes(e))
      throw new NotifyConfigError("events", `unknown event ${JSON.stringify(e)} (want any of ${known})`);
    if (out.includes(e as NotifyEventName))
      throw new NotifyConfigError("events", `lists ${JSON.stringify(e)} twice`);
    out.push(e as NotifyEventName);
  }
  return out;
}
