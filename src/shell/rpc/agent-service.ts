/**
 * AgentService (`proto/harness/v1/agents.proto`): `CheckRun`, what a hook call of a hook-fed
 * run may do now. Read tier, so it only reports: the verdict comes from `peek`, which delivers nothing.
 * Delivering a stop closes the run, a write only the ingest path makes, answering the agent's hook with
 * the run's producer credentials; a reader looking must not spend the stop the hook should receive.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { HeldVerdict, StoppedVerdict, RunVerdict as Verdict } from "../../core/run-verdict.js";
import { InvalidArgumentError } from "../errors.js";
import { type AgentService, RunVerdict, StopCause } from "./gen/harness/v1/agents_pb.js";
import { checkLength } from "./requests.js";
import { serve } from "./status.js";

export interface AgentServiceDeps {
  /** The verdict without delivering anything. */
  readonly peek: (harness: string, run: string) => Verdict;
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
            return { verdict: RunVerdict.ALLOW };
          case "held":
            return {
              verdict: RunVerdict.HELD,
              rule: v.rule,
              fireId: v.fireId,
              clearCommand: v.clearCommand,
              message: heldMessage(req.harness, v),
            };
          case "stopped":
            return {
              verdict: RunVerdict.STOPPED,
              rule: v.rule,
              fireId: v.fireId,
              stoppedBy: v.by === "rule" ? StopCause.RULE : StopCause.LOOP_GUARD,
              message: stoppedMessage(req.run, v),
            };
        }
      }),
  };
}

/** The sentence CheckAdmission gives, for a run: it names the rule, the fire and the clear command. */
export const heldMessage = (harness: string, v: HeldVerdict): string =>
  `${harness} is held by rule ${v.rule} (fire ${v.fireId}); run \`${v.clearCommand}\` to release it`;

export const stoppedMessage = (run: string, v: StoppedVerdict): string =>
  v.by === "rule"
    ? `${run} was stopped by rule ${v.rule} (fire ${v.fireId})`
    : `${run} was stopped by the loop guard: the same tool call eight times in a row (${v.fireId})`;
