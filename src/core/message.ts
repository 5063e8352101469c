/**
 * Rendering a rule's message (SPEC-0029 REQ-3): placeholders take the event's identifier fields only,
 * an absent value renders empty, and every value is redacted first, so a secret-shaped substring a
 * branch or path might carry never reaches a notification.
 */

import { rfc3339Seconds } from "./instants.js";
import type { EventFields } from "./journal.js";
import { redact } from "./redact.js";
import type { Level } from "./rule-file.js";

export interface MessageContext {
  readonly rule: string;
  readonly level: Level;
  /** The row's admission time, ms. */
  readonly at: number;
  readonly event: EventFields;
}

const FROM_EVENT = new Set(["harness", "run", "repo", "branch", "path", "type"]);

export function renderMessage(template: string, ctx: MessageContext): string {
  return template.replace(/\{\{\s*([a-z]+)\s*\}\}/g, (_, name: string) => {
    if (name === "rule") return ctx.rule;
    if (name === "level") return ctx.level;
    if (name === "at") return rfc3339Seconds(ctx.at);
    if (!FROM_EVENT.has(name)) return "";
    const v =
      name === "path" ? (ctx.event.path ?? (ctx.event.paths as unknown[] | undefined)?.[0]) : ctx.event[name];
    return typeof v === "string" ? redact(v) : "";
  });
}
