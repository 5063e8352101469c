/**
 * What the daemon's ingest and the command forwarder need of one way an agent calls the hook endpoint
 * (`POST /hooks/<name>`, `harness hook <name>`): the payload's ids, what a verdict may refuse at each
 * event, the mapping to a row and the answer in the agent's own format. Each agent's adapter
 * (`../adapters/`) provides its formats; the registry there lists them. Types only: the forwarder's
 * import graph stays small.
 */
import type { AnswerFormat } from "./hook-answer.js";
import type { Gate, HookIds, Mapped, Payload } from "./hook-event.js";

/** Where an agent's answers can carry text for the model (its `additionalContext`), and how much. */
export interface HookContext {
  /** The events whose answer takes it, as the agent's hooks reference says. */
  readonly events: readonly string[];
  /** The most characters of it one answer carries: within the agent's own cap, conservatively. */
  readonly maxChars: number;
}

export interface HookFormat {
  /** The endpoint's path segment and the forwarder's first argument. */
  readonly name: string;
  /** The agent whose rows these are: the `adapter` of each row. */
  readonly agent: string;
  readonly ids: HookIds;
  /** Where the command hook gets the payload: its stdin, or its last argument. */
  readonly payloadFrom: "stdin" | "argument";
  /** What a verdict may refuse at a call of `event` (undefined: the payload names none). */
  readonly gate: (event: string | undefined) => Gate;
  /** The payload as at most one row, or why it cannot be used (`verifyPatterns`: `[agents] verify_patterns`). */
  readonly map: (p: Payload, verifyPatterns: readonly string[]) => Mapped;
  readonly answer: AnswerFormat;
  /** Where its answers can carry text for the model; absent: the agent is told nothing. */
  readonly context?: HookContext;
}

/** The formats the endpoint serves, by name. */
export interface HookFormats {
  hook(name: string): HookFormat | undefined;
  readonly hookNames: readonly string[];
}
