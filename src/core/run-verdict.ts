/**
 * What a hook call of a hook-fed run may do (SPEC-0029 REQ-11, REQ-12): go on, wait out a hold placed
 * before the run was first seen, or end because a stop reached it. The daemon's agents side decides it
 * from the store (`shell/agents/enforcement/run-verdict.ts`); the read tier's CheckRun reports it. Why a
 * harness is held, or a run stopped, is said in one sentence each, `held-sentence.ts`.
 */

export type RunVerdict =
  | { readonly kind: "allow" }
  | { readonly kind: "held"; readonly rule: string; readonly fireId: string; readonly clearCommand: string }
  | {
      readonly kind: "stopped";
      readonly rule: string;
      readonly fireId: string;
      readonly by: "rule" | "loop_guard";
      /** The run stopped, and the command that releases its stop. */
      readonly run: string;
      readonly resumeCommand: string;
      /** Released by the operator: its session's next SessionStart opens a new run. */
      readonly released: boolean;
    };

export type HeldVerdict = Extract<RunVerdict, { kind: "held" }>;
export type StoppedVerdict = Extract<RunVerdict, { kind: "stopped" }>;
