/**
 * Hook-fed runs: runs whose rows come from an agent's own hooks (Claude Code, Codex) rather than from a
 * supervisor that owns the process. Their `run_event` rows carry `adapter` = one of `HOOK_ADAPTERS`. No
 * supervisor can stop them, so a stop waits for the run's next hook call, and one harness may have
 * several such runs in flight at once (one per session).
 */
import type { EventFields } from "./journal.js";

export const HOOK_ADAPTERS = ["claude-code", "codex"] as const;
export type HookAdapter = (typeof HOOK_ADAPTERS)[number];

export const isHookAdapter = (v: unknown): v is HookAdapter =>
  typeof v === "string" && (HOOK_ADAPTERS as readonly string[]).includes(v);

/** Whether a `run_event` row came from an agent's hooks. */
export const isHookFed = (event: EventFields): boolean => isHookAdapter(event.adapter);
