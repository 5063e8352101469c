/**
 * What a hook call of a hook-fed run may do, as the daemon decides it from the store
 * (`shell/agents/enforcement/run-verdict.ts`) and reports it (`CheckRun`), and the one sentence that says
 * why a harness is held, wherever it is said (a hook's denial, CheckRun, CheckAdmission).
 */

export type RunVerdict =
  | { readonly kind: "allow" }
  | { readonly kind: "held"; readonly rule: string; readonly fireId: string; readonly clearCommand: string }
  | {
      readonly kind: "stopped";
      readonly rule: string;
      readonly fireId: string;
      readonly by: "rule" | "loop_guard";
    };

export type HeldVerdict = Extract<RunVerdict, { kind: "held" }>;
export type StoppedVerdict = Extract<RunVerdict, { kind: "stopped" }>;

/** The command that releases a harness's holds. */
export const clearCommand = (harness: string): string => `harness rules clear ${harness}`;

/** Why `harness` is held: the holding rule, its fire and the command that releases it. */
export const heldSentence = (
  harness: string,
  hold: { readonly rule: string; readonly fireId: string },
): string =>
  `${harness} is held by rule ${hold.rule} (fire ${hold.fireId}); run \`${clearCommand(harness)}\` to release it`;
