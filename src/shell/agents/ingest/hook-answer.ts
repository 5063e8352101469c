/**
 * The answer to a hook call: what the run's verdict refuses at the call's gate, then written in the
 * agent's own format by its hook format's `answer` (`hook-format.ts`). Exit code 2 is never used: a refusal is
 * always a decision with its reason, so an exit code alone never blocks by accident.
 *
 * - held (a run first seen after a hold): the tool about to run is denied, the reason naming the rule,
 *   the fire and the clear command; other events go on.
 * - stopped: the turn ends, and the tool or prompt at hand is refused with it (as far as the agent's
 *   format allows), every call until the run ends.
 */
import { heldSentence, stoppedSentence } from "../../../core/held-sentence.js";
import type { RunVerdict } from "../../../core/run-verdict.js";
import type { FailPolicy } from "./fail-mode.js";
import type { Gate } from "./hook-event.js";

/** What the hook prints on stdout (empty: no decision, the agent goes on). */
export type HookAnswer = string;

export const ALLOW: HookAnswer = "";

/** `deny`: the tool about to run is refused; `stop`: the turn ends, refusing what is at hand. */
export interface Refusal {
  readonly kind: "deny" | "stop";
  readonly reason: string;
}

/**
 * Text for the model, given with the answer to a call of `event` (an event the agent's format takes it
 * at: `HookFormat.context`).
 */
export interface AnswerContext {
  readonly event: string;
  readonly text: string;
}

/**
 * The answer, in an agent's own format, to a call at `gate` (no refusal: the call goes on), carrying
 * `context` when given.
 */
export type AnswerFormat = (gate: Gate, refusal: Refusal | undefined, context?: AnswerContext) => HookAnswer;

/** What verdict `v` refuses at `gate`, or undefined when the call goes on. */
export function refusalOf(harness: string, gate: Gate, v: RunVerdict): Refusal | undefined {
  switch (v.kind) {
    case "allow":
      return undefined;
    case "held":
      return gate === "tool" ? { kind: "deny", reason: heldSentence(harness, v) } : undefined;
    case "stopped":
      return { kind: "stop", reason: stoppedSentence(v) };
  }
}

/** The answer for a call at `gate` of a run with verdict `v`, in `format`'s own words. */
export const hookAnswer = (
  format: { readonly answer: AnswerFormat },
  harness: string,
  gate: Gate,
  v: RunVerdict,
): HookAnswer => format.answer(gate, refusalOf(harness, gate, v));

/** The answer when the daemon cannot be reached: a harness failing closed refuses tools only. */
export function unreachableAnswer(
  format: { readonly answer: AnswerFormat },
  gate: Gate,
  policy: FailPolicy,
): HookAnswer {
  if (policy.mode === "allow" || gate !== "tool") return ALLOW;
  return format.answer(gate, {
    kind: "deny",
    reason: `the harness rules daemon cannot be reached, and ${policy.source} refuses tools until it can`,
  });
}
