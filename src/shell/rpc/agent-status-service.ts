/**
 * AgentStatusService (read tier): LastRows, the last run_event row of each harness named, for
 * `harness doctor`'s agents row (docs/agents.md).
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { InvalidArgumentError } from "../errors.js";
import type { StoreDoor } from "../store/store-door.js";
import type { AgentStatusService } from "./gen/harness/v1/agent_status_pb.js";
import { checkLength } from "./requests.js";
import { serve } from "./status.js";

/** The most harnesses one LastRows request may name. */
const MAX_HARNESSES = 100;

export function agentStatusService(reads: StoreDoor["agents"]): ServiceImpl<typeof AgentStatusService> {
  return {
    lastRows: (req) =>
      serve("LastRows", async () => {
        if (req.harnesses.length > MAX_HARNESSES)
          throw new InvalidArgumentError(
            "",
            `${req.harnesses.length} harnesses is over the most one LastRows request names (${MAX_HARNESSES})`,
          );
        for (const h of req.harnesses) checkLength(h, "harness");
        const rows = [];
        for (const harness of req.harnesses) {
          const row = await reads.lastRunEvent(harness);
          if (row !== undefined)
            rows.push({
              harness,
              seq: BigInt(row.seq),
              type: row.type,
              atMs: BigInt(row.at),
              source: row.source,
              run: row.run ?? "",
              adapter: typeof row.adapter === "string" ? row.adapter : "",
            });
        }
        return { rows };
      }),
  };
}
