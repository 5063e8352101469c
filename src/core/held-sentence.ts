/**
 * How a hold is named to whoever meets it: a supervisor asking CheckAdmission, a reader asking CheckRun,
 * the notify hook's hint, explain. One sentence says a harness is held, by which rule's fire, and the
 * one command that releases it; another says a hook-fed run is stopped, by what, and what brings its
 * session back (the agent's hook answer, CheckRun).
 */

/** The operator's release of the harness's holds (only `rule`'s, when given). */
export const clearCommand = (harness: string, rule?: string): string =>
  rule === undefined ? `harness rules clear ${harness}` : `harness rules clear ${harness} --rule ${rule}`;

/** That `harness` is held: by which rule's fire, and how the operator releases it. */
export const heldSentence = (
  harness: string,
  hold: { readonly rule: string; readonly fireId: string },
): string =>
  `${harness} is held by rule ${hold.rule} (fire ${hold.fireId}); run \`${clearCommand(harness)}\` to release it`;

/** The operator's release of a stopped hook-fed run: its session may start again, as a new run. */
export const resumeCommand = (run: string): string => `harness rules resume ${run}`;

/** That `run` is stopped: by which rule's fire or the loop guard, and what brings its session back. */
export function stoppedSentence(v: {
  readonly run: string;
  readonly rule: string;
  readonly fireId: string;
  readonly by: "rule" | "loop_guard";
  readonly released: boolean;
}): string {
  const by = v.by === "loop_guard" ? "the loop guard (the same tool call over and over)" : `rule ${v.rule}`;
  const next = v.released
    ? "the operator released it: start or resume the session again to go on as a new run"
    : `ask the operator to run \`${resumeCommand(v.run)}\`, then start or resume the session again`;
  return `${v.run} was stopped by ${by} (fire ${v.fireId}); ${next}`;
}
