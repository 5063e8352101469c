/**
 * AgentService (`proto/harness/v1/agents.proto`): `CheckRun`, what a hook call of a hook-fed
 * run may do now. Read tier, so it only reports: the verdict comes from `peek`, which delivers nothing.
 * Delivering a stop closes the run, a write only the ingest path makes, answering the agent's hook with
 * the run's producer credentials; a reader looking must not spend the stop the hook should receive.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { heldSentence } from "../../core/held-sentence.js";
import type { RunVerdict } from "../../core/run-verdict.js";
import { InvalidArgumentError } from "../errors.js";
import { type AgentService, RunVerdict as RunVerdictWire, StopCause } from "./gen/harness/v1/agents_pb.js";
import { checkLength } from "./requests.js";
import { serve } from "./status.js";

export interface AgentServiceDeps {
  /** The verdict without delivering anything. */
  readonly peek: (harness: string, run: string) => RunVerdict;
}

export function agentService(deps: AgentServiceDeps): ServiceImpl<typeof AgentService> {
  return {
    checkRun: (req) =>
      serve(`CheckRun ${req.harness} ${req.run}`, () => {
        checkLength(req.harness, "harness");
        checkLength(req.run, "run");
        if (req.harness === "" || req.run === "")
          throw new InvalidArgumentError("", "CheckRun needs a harness and a run");
        const v = deps.peek(req.harness, req.run);
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
              message: stoppedMessage(req.run, v),
            };
        }
      }),
  };
}

export const stoppedMessage = (run: string, v: Extract<RunVerdict, { kind: "stopped" }>): string =>
  v.by === "rule"
    ? `${run} was stopped by rule ${v.rule} (fire ${v.fireId})`
    : `${run} was stopped by the loop guard: the same tool call eight times in a row (${v.fireId})`;
