/**
 * What the hook receives: the JSON on its stdin and the `HARNESS_NOTIFY_*` variables, built from one
 * event exactly as the supervisor builds its own (`../shared/harness-context.md`, "Notifications"), so
 * one hook serves both. Pure: the host and the parent environment are arguments.
 */

import { clearCommand } from "../../core/held-sentence.js";
import { rfc3339Seconds } from "../../core/instants.js";
import type { Action } from "../../core/outcome.js";
import { redact } from "../../core/redact.js";
import type { Level } from "../../core/rule-file.js";
import type { NotifyEventName } from "./config.js";

/** The stdin schema version: additive changes keep it, a rename or a removal bumps it. */
export const PAYLOAD_VERSION = 1;

interface RuleEventBase {
  /** "" for a fleet target: the payload then omits `harness`. */
  readonly harness: string;
  /** The harness's state as the event left it. */
  readonly state: string;
  /** The one-line summary: the fire's rendered message. */
  readonly message: string;
  /** The most useful single fact behind the event. */
  readonly cause: string;
  readonly rule: string;
  /** The fire behind the event; for a release, the fire that placed the hold. */
  readonly fireId: string;
  /** When it happened, ms since the epoch. */
  readonly at: number;
}

export interface RuleFiredEvent extends RuleEventBase {
  readonly event: "rule_fired";
  /** The effective level, after shadow and enforce. */
  readonly level: Level;
  readonly declaredLevel: Level;
  readonly action: Action;
}

export interface RuleHoldEvent extends RuleEventBase {
  readonly event: "rule_hold";
}

export interface RuleHoldReleasedEvent extends RuleEventBase {
  readonly event: "rule_hold_released";
}

export type NotifyEvent = RuleFiredEvent | RuleHoldEvent | RuleHoldReleasedEvent;

export interface NotifyPayload {
  readonly version: typeof PAYLOAD_VERSION;
  readonly event: NotifyEventName;
  readonly harness?: string;
  readonly host: string;
  readonly state: string;
  readonly message: string;
  readonly cause: string;
  /** The command that shows more. */
  readonly hint: string;
  /** UTC RFC 3339, seconds. */
  readonly time: string;
  readonly rule: string;
  readonly fire_id: string;
  readonly level?: Level;
  readonly declared_level?: Level;
  readonly action?: Action;
}

/** Free text goes on one line: it is meant for a notification title, and a newline in an env var trips naive scripts. */
const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim();

function hint(e: NotifyEvent): string {
  switch (e.event) {
    case "rule_fired":
    case "rule_hold_released":
      return `harness rules explain ${e.fireId}`;
    case "rule_hold":
      return clearCommand(e.harness);
    default: {
      const never: never = e;
      return never;
    }
  }
}

/**
 * The stdin JSON of `e`. Every free string is redacted, since a message can quote what an agent wrote;
 * `event`, `level`, `declared_level` and `action` are closed enums with nothing to mask.
 */
export function buildPayload(e: NotifyEvent, host: string): NotifyPayload {
  const common = {
    version: PAYLOAD_VERSION,
    event: e.event,
    ...(e.harness === "" ? {} : { harness: redact(e.harness) }),
    host: redact(host),
    state: redact(e.state),
    message: oneLine(redact(e.message)),
    cause: oneLine(redact(e.cause)),
    hint: redact(hint(e)),
    time: rfc3339Seconds(e.at),
    rule: redact(e.rule),
    fire_id: redact(e.fireId),
  } as const;
  if (e.event !== "rule_fired") return common;
  return { ...common, level: e.level, declared_level: e.declaredLevel, action: e.action };
}

const ENV_PREFIX = "HARNESS_NOTIFY_";

/** The hook's environment: the parent's without any inherited `HARNESS_NOTIFY_*`, then this delivery's. */
export function hookEnv(parent: NodeJS.ProcessEnv, p: NotifyPayload): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (v !== undefined && !k.startsWith(ENV_PREFIX)) env[k] = v;
  env[`${ENV_PREFIX}EVENT`] = p.event;
  env[`${ENV_PREFIX}HARNESS`] = p.harness ?? "";
  env[`${ENV_PREFIX}HOST`] = p.host;
  env[`${ENV_PREFIX}STATE`] = p.state;
  env[`${ENV_PREFIX}MESSAGE`] = p.message;
  return env;
}
