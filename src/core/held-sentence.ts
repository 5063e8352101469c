/**
 * How a hold is named to whoever meets it: a supervisor asking CheckAdmission, a reader asking CheckRun,
 * the notify hook's hint, explain. One sentence says a harness is held, by which rule's fire, and the
 * one command that releases it.
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
