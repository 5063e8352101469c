/**
 * The gateway's backtest_rule tool (SPEC-0029 REQ-8, REQ-15): a candidate rule's fields, rendered as
 * the rule file propose_rule would store, replayed through RuleService.Backtest's handler in this
 * process, so it shares that method's runner and its limit of two backtests at once (a third gets
 * backtest_busy, RESOURCE_EXHAUSTED). Registered for rule miners only: a backtest replays every
 * harness's rows, and its counts and fires describe them all.
 */
import { create } from "@bufbuild/protobuf";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { DAY } from "../../core/durations.js";
import { LEVELS } from "../../core/rule-file.js";
import { renderRuleFile } from "../proposals/propose-rule.js";
import { BacktestRequestSchema } from "../rpc/gen/harness/v1/rules_pb.js";
import { PROPOSE_RULE_INPUT } from "./propose-rule-tool.js";
import { gatewayContext } from "./rule-tools.js";
import type { SessionContext } from "./session-context.js";
import { dataResult, READ_ANNOTATIONS, wrappedOutput } from "./tool-results.js";
import { TIME } from "./tool-shapes.js";

/** The fires an answer lists; the summary counts them all. */
const FIRST_FIRES = 10;

const COUNT = z.number().int().min(0);

const BACKTEST = z.object({
  rule: z.string(),
  hash: z.string().describe("The candidate's content hash."),
  from_seq: COUNT.describe("The first row replayed (0 when the stretch is empty)."),
  to_seq: COUNT.describe("The last row replayed."),
  summary: z.object({
    rows: COUNT,
    fires: COUNT,
    suppressed: COUNT.describe("Matches inside the cooldown, not fires."),
    eval_errors: COUNT,
    store_errors: COUNT,
    cost_exceeded: COUNT,
  }),
  first_fires: z.array(
    z.object({
      seq: COUNT,
      at: TIME,
      type: z.string(),
      target: z.string().describe('<kind>:<key>, e.g. run:nightly#4; ":" when the row lacked the field.'),
      level: z.string(),
      message: z.string(),
    }),
  ),
});

export function registerBacktestRule(server: McpServer, session: SessionContext): void {
  const { name, description, on, when, cooldown, target, message } = PROPOSE_RULE_INPUT;
  server.registerTool(
    "backtest_rule",
    {
      annotations: READ_ANNOTATIONS,
      title: "Backtest a candidate rule",
      description:
        "Replays the journal through a candidate rule, exactly as the live evaluator would have run it, and answers how many rows it saw and how often it would have fired, with its first 10 fires. Stores nothing. The fields are propose_rule's; level may be any level here. seq is a number, at an RFC 3339 time.",
      inputSchema: {
        name,
        description,
        on,
        when,
        level: z
          .enum(LEVELS)
          .describe(
            'What a fire does: "annotate", "notify", "hold" or "stop" (a backtest acts on none; propose_rule accepts only annotate and notify).',
          ),
        cooldown,
        target,
        message,
        since_days: z
          .number()
          .int()
          .min(1)
          .max(365)
          .optional()
          .describe(
            "How many days back to replay (default 30; at most the journal's retention minus 7 days).",
          ),
      },
      outputSchema: wrappedOutput("backtest_rule", BACKTEST),
    },
    (args, extra) =>
      session.guard("backtest_rule", async () => {
        const { since_days: sinceDays, cooldown: wait, ...rule } = args;
        const file = `rules/${/^[a-z][a-z0-9-]{0,62}$/.test(rule.name) ? rule.name : "candidate"}.toml`;
        const text = renderRuleFile({ ...rule, ...(wait === undefined ? {} : { cooldown: wait }) });
        const request = create(BacktestRequestSchema, {
          file,
          text,
          sinceMs: BigInt((sinceDays ?? 0) * DAY),
        });
        const fires: unknown[] = [];
        let summary: unknown;
        let start: unknown;
        for await (const part of session.deps.rules.backtest(
          request,
          gatewayContext("backtest", extra.signal),
        )) {
          const p = part.part;
          if (p?.case === "start")
            start = {
              rule: p.value.rule,
              hash: p.value.hash,
              from_seq: Number(p.value.fromSeq ?? 0),
              to_seq: Number(p.value.toSeq ?? 0),
            };
          else if (p?.case === "fires") {
            for (const f of (p.value.fires ?? []).slice(0, FIRST_FIRES - fires.length))
              fires.push({
                seq: Number(f.seq ?? 0),
                at: new Date(Number(f.atMs ?? 0)).toISOString(),
                type: f.type,
                target: `${f.targetKind ?? ""}:${f.targetKey ?? ""}`,
                level: f.level,
                message: f.message,
              });
          } else if (p?.case === "summary")
            summary = {
              rows: Number(p.value.rows ?? 0),
              fires: Number(p.value.fires ?? 0),
              suppressed: Number(p.value.suppressed ?? 0),
              eval_errors: Number(p.value.evalErrors ?? 0),
              store_errors: Number(p.value.storeErrors ?? 0),
              cost_exceeded: Number(p.value.costExceeded ?? 0),
            };
        }
        return dataResult("backtest_rule", { ...(start as object), summary, first_fires: fires });
      }),
  );
}
