/**
 * The verdict seam between agents-ingest and agents-enforce (issue 17): what a hook call of a run may
 * do now. agents-enforce's `run-verdict.ts` owns these types and the daemon's implementation
 * (`app.runVerdicts`); they are repeated here, exactly, so the ingest endpoint builds before that lands.
 * At the merge this module becomes `export type { RunVerdict, RunVerdicts } from "./run-verdict.js";`.
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

export interface RunVerdicts {
  /**
   * What a hook call of this run may do now. Delivers a pending stop (records it delivered and closes
   * the run cancelled / rule_stop) when it answers `stopped` for the first time.
   */
  check(harness: string, run: string): RunVerdict;
}
