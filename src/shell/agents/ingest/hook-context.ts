/**
 * The answer to a live hook call, composed with what the run is to be told of the rules
 * (`../enforcement/tell.ts`): the verdict's refusal, if any, and beside it the text for the model, at
 * the events whose answer the agent's format lets carry it (`HookFormat.context`, the adapter's record).
 * A stop ends the turn, so a stopped call is told nothing, and its fires stay untold.
 */
import type { RunVerdict } from "../../../core/run-verdict.js";
import type { RunTelling } from "../enforcement/tell.js";
import { type HookAnswer, refusalOf } from "./hook-answer.js";
import type { HookFormat } from "./hook-format.js";

export interface TellingCall {
  readonly format: HookFormat;
  readonly harness: string;
  readonly run: string;
  /** The hook's event name as the agent sent it. */
  readonly event: string;
  readonly verdict: RunVerdict;
}

/** The call's answer, telling the run what is to be told where the format allows (`tell` undefined: never). */
export async function answerTelling(
  call: TellingCall,
  tell: RunTelling | undefined,
  onError?: (what: string, e: unknown) => void,
): Promise<HookAnswer> {
  const { format, harness, run, event } = call;
  const gate = format.gate(event);
  const refusal = refusalOf(harness, gate, call.verdict);
  const where = format.context;
  if (tell === undefined || where === undefined || refusal?.kind === "stop" || !where.events.includes(event))
    return format.answer(gate, refusal);
  let text: string | undefined;
  try {
    text = await tell.tell(harness, run, where.maxChars);
  } catch (e) {
    // Nothing was recorded told (its transaction rolled back): the fires wait for a later answer.
    onError?.("telling the run of the rules", e);
  }
  return format.answer(gate, refusal, text === undefined ? undefined : { event, text });
}
