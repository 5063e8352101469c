/**
 * AgentService (`proto/harness/v1/agents.proto`): `CheckRun`, what a hook call of a hook-fed
 * run may do now. Read tier, so it only reports: the verdict comes from `peek`, which delivers nothing.
 * Delivering a stop closes the run, a write only the ingest path makes, answering the agent's hook with
 * the run's producer credentials; a reader looking must not spend the stop the hook should receive.
 * `ResumeRun` (control tier) records the operator's release of a run's stop in the store; the new run
 * it allows is opened by the session's next SessionStart, through the ingest, not by this call.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { heldSentence, stoppedSentence } from "../../core/held-sentence.js";
import type { RunVerdict } from "../../core/run-verdict.js";
import { InvalidArgumentError } from "../errors.js";
import { type AgentService, RunVerdict as RunVerdictWire, StopCause } from "./gen/harness/v1/agents_pb.js";
import { checkLength } from "./requests.js";
import { serve } from "./status.js";
import { CALLER, operatorOf } from "./tiers.js";

export interface AgentServiceDeps {
  /** The verdict without delivering anything. */
  readonly peek: (harness: string, run: string) => Promise<RunVerdict>;
  /**
   * The run's stop, released now (`released`, by the operator `by`, decision 0018) or before; undefined
   * when the run has no stop.
   */
  readonly resume: (
    run: string,
    by: string | undefined,
  ) => Promise<
    | {
        readonly harness: string;
        readonly rule: string;
        readonly fireId: string;
        readonly by: "rule" | "loop_guard";
        readonly released: boolean;
      }
    | undefined
  >;
}

export function agentService(deps: AgentServiceDeps): ServiceImpl<typeof AgentService> {
  return {
    checkRun: (req) =>
      serve(`CheckRun ${req.harness} ${req.run}`, async () => {
        checkLength(req.harness, "harness");
        checkLength(req.run, "run");
        if (req.harness === "" || req.run === "")
          throw new InvalidArgumentError("", "CheckRun needs a harness and a run");
        const v = await deps.peek(req.harness, req.run);
        switch (v.kind) {
          case "allow":
            return { verdict: RunVerdictWire.ALLOW };
          case "held":
            return {
              verdict: RunVerdictWire.HELD,
              rule: v.rule,
              fireId: v.fireId,
              clearCommand: v.clearCommand,
              message: heldSentence(req.harness, v),
            };
          case "stopped":
            return {
              verdict: RunVerdictWire.STOPPED,
              rule: v.rule,
              fireId: v.fireId,
              stoppedBy: v.by === "rule" ? StopCause.RULE : StopCause.LOOP_GUARD,
              message: stoppedSentence(v),
              resumeCommand: v.resumeCommand,
              released: v.released,
            };
        }
      }),

    resumeRun: (req, ctx) =>
      serve(`ResumeRun ${req.run}`, async () => {
        checkLength(req.run, "run");
        if (req.run === "") throw new InvalidArgumentError("", "ResumeRun needs a run");
        const stop = await deps.resume(req.run, operatorOf(ctx.values.get(CALLER)));
        if (stop === undefined) return { stopped: false };
        return {
          stopped: true,
          harness: stop.harness,
          rule: stop.rule,
          fireId: stop.fireId,
          stoppedBy: stop.by === "rule" ? StopCause.RULE : StopCause.LOOP_GUARD,
          released: stop.released,
        };
      }),
  };
}
