/** The events the reference supervisor reports through `ReferenceSupervisorOptions.onEvent`. */
import type { Trigger } from "./runs.js";

/** What the supervisor did, for its own log and for the demo to print. */
export type SupervisorEvent =
  | { readonly kind: "spawned"; readonly harness: string; readonly run: string; readonly trigger: Trigger }
  | {
      readonly kind: "closed";
      readonly harness: string;
      readonly run: string;
      readonly outcome: string;
      readonly reason: string;
      readonly exitCode?: number;
    }
  | {
      readonly kind: "skipped";
      readonly harness: string;
      readonly run: string;
      readonly reason: "rule_hold" | "overlap";
      readonly message: string;
    }
  | {
      readonly kind: "refused";
      readonly harness: string;
      readonly command: "start" | "restart" | "trigger";
      readonly message: string;
    }
  | { readonly kind: "not_restarted"; readonly harness: string; readonly message: string }
  | {
      readonly kind: "loop_stopped";
      readonly harness: string;
      readonly run: string;
      readonly tool: string;
      readonly count: number;
    }
  | {
      readonly kind: "rule_stop";
      readonly harness: string;
      readonly run: string;
      readonly rule: string;
      readonly fireId: string;
      readonly seq: number;
      /** `not_in_flight`: the run had ended or been replaced, and nothing was stopped. */
      readonly result: "stopped" | "not_in_flight";
      readonly inFlight: string;
    }
  | { readonly kind: "admission_unavailable"; readonly harness: string; readonly error: string };
