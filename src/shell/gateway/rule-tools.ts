/**
 * The gateway's read tools over RuleService (SPEC-0029 REQ-15, REQ-17: the gateway uses RuleService's
 * handlers, never a private path): list_rules, get_rule, list_fires, explain_fire, list_holds. Each
 * calls the handler the ConnectRPC server serves, in this process, and returns its answer as JSON
 * wrapped as untrusted memory data. A rule miner sees every harness's fires and holds; any other
 * caller only its own harness's, whatever it asks for.
 */
import { create, type DescMessage, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { UnknownFireError } from "../errors.js";
import {
  ExplainFireRequestSchema,
  ExplainFireResponseSchema,
  GetRuleRequestSchema,
  GetRuleResponseSchema,
  ListFiresRequestSchema,
  ListFiresResponseSchema,
  ListHoldsRequestSchema,
  ListHoldsResponseSchema,
  ListRulesRequestSchema,
  ListRulesResponseSchema,
  RuleService,
} from "../rpc/gen/harness/v1/rules_pb.js";
import type { SessionContext } from "./session-context.js";
import { dataResult, READ_ANNOTATIONS, ToolInputError, withinTotal } from "./tool-results.js";

const NAME = z.string().max(256);

/** A handler context for a call made in this process on the gateway's behalf. */
export function gatewayContext(
  method: keyof typeof RuleService.method,
  signal?: AbortSignal,
): HandlerContext {
  return createHandlerContext({
    service: RuleService,
    method: RuleService.method[method],
    protocolName: "mcp-gateway",
    requestMethod: "POST",
    url: `mcp-gateway:/${RuleService.typeName}/${RuleService.method[method].name}`,
    ...(signal === undefined ? {} : { requestSignal: signal }),
  });
}

/** A handler's answer as plain JSON (int64 as strings, as protobuf's JSON mapping gives them). */
const json = <T extends DescMessage>(schema: T, init: MessageInitShape<T>) =>
  toJson(schema, create(schema, init)) as Record<string, unknown>;

/** The harness a caller may read: its own, unless it is a rule miner (which reads the whole journal). */
export function scopedHarness(session: SessionContext, asked: string | undefined): string | undefined {
  if (session.miner) return asked === "" ? undefined : asked;
  const own = session.caller.harness;
  if (asked !== undefined && asked !== "" && asked !== own)
    throw new ToolInputError(
      `you may read only your own harness's rows and fires (${own}), not ${JSON.stringify(asked.slice(0, 64))}; leave harness out`,
    );
  return own;
}

/** A list answer kept within the total cap. */
function capped(result: Record<string, unknown>, key: string): Record<string, unknown> {
  const items = (result[key] as unknown[] | undefined) ?? [];
  const { kept, truncated } = withinTotal(items);
  return { ...result, [key]: kept, ...(truncated ? { truncated: true } : {}) };
}

export function registerRuleTools(server: McpServer, session: SessionContext): void {
  const { rules } = session.deps;

  server.registerTool(
    "list_rules",
    {
      annotations: READ_ANNOTATIONS,
      title: "List the rules",
      description:
        "The rules in force: for each its name, source, on kind, declared and effective level, mode (shadow, active or disabled with its reason), hash, fires in the last 24 hours and 7 days, and last fire.",
      inputSchema: {},
    },
    () =>
      session.guard("list_rules", async () => {
        const r = await rules.listRules(create(ListRulesRequestSchema, {}), gatewayContext("listRules"));
        return dataResult("list_rules", capped(json(ListRulesResponseSchema, r), "rules"));
      }),
  );

  server.registerTool(
    "get_rule",
    {
      annotations: READ_ANNOTATIONS,
      title: "Show one rule",
      description:
        "One rule by name: what list_rules gives, plus its normalized `when`, description, message template, holds in force and number of primitive calls.",
      inputSchema: { name: NAME.describe("The rule's name, as list_rules gives it.") },
    },
    ({ name }) =>
      session.guard("get_rule", async () => {
        const r = await rules.getRule(create(GetRuleRequestSchema, { name }), gatewayContext("getRule"));
        const result = json(GetRuleResponseSchema, r);
        // Holds name harnesses: a caller that is not a miner sees only its own harness's.
        if (!session.miner && Array.isArray(result.holds))
          result.holds = result.holds.filter(
            (h) => (h as { harness?: string }).harness === session.caller.harness,
          );
        return dataResult("get_rule", result);
      }),
  );

  server.registerTool(
    "list_fires",
    {
      annotations: READ_ANNOTATIONS,
      title: "List fires",
      description:
        "The fire log, newest first: each fire's id (f-<seq>-<n>), rule, journal seq and time, target, levels, mode, action and message. Filter by rule, harness and time; at most 1,000 a call.",
      inputSchema: {
        rule: NAME.optional().describe("Only this rule's fires."),
        harness: NAME.optional().describe(
          "Only fires of this harness. A caller that is not a rule miner sees only its own harness's fires.",
        ),
        since: z
          .string()
          .max(64)
          .optional()
          .describe(
            'Only fires of rows admitted at or after this RFC 3339 time, e.g. "2026-12-01T00:00:00Z".',
          ),
        limit: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .describe("At most this many fires (default 100)."),
      },
    },
    ({ rule, harness, since, limit }) =>
      session.guard("list_fires", async () => {
        const scoped = scopedHarness(session, harness);
        const r = await rules.listFires(
          create(ListFiresRequestSchema, {
            rule: rule ?? "",
            harness: scoped ?? "",
            sinceMs: BigInt(sinceMsOf(since)),
            limit: limit ?? 0,
          }),
          gatewayContext("listFires"),
        );
        return dataResult("list_fires", capped(json(ListFiresResponseSchema, r), "fires"));
      }),
  );

  server.registerTool(
    "explain_fire",
    {
      annotations: READ_ANNOTATIONS,
      title: "Explain a fire",
      description:
        "Why a fire happened: the fire, the rule's `when`, the journal row it evaluated (its identifiers), the `now` it saw, each primitive call with its selector, window and answer, and how its level was derived.",
      inputSchema: {
        fire_id: NAME.describe(
          "The fire's id, f-<seq>-<n>, as list_fires gives it; or journal:<seq>, the id a loop-guard stop's deny reason names.",
        ),
      },
    },
    ({ fire_id }) =>
      session.guard("explain_fire", async () => {
        const r = await rules.explainFire(
          create(ExplainFireRequestSchema, { fireId: fire_id }),
          gatewayContext("explainFire"),
        );
        // Another harness's fire (or loop stop) is, to a caller that may not see it, a fire that does not exist.
        if (!session.miner && (r.fire?.harness ?? r.guard?.harness) !== session.caller.harness)
          throw new UnknownFireError(fire_id);
        return dataResult("explain_fire", json(ExplainFireResponseSchema, r));
      }),
  );

  server.registerTool(
    "list_holds",
    {
      annotations: READ_ANNOTATIONS,
      title: "List holds",
      description:
        "The holds in force (a held harness is refused new runs until its rule's condition clears or the operator clears it), and with include_released the released ones, newest first.",
      inputSchema: {
        harness: NAME.optional().describe(
          "Only this harness's holds. A caller that is not a rule miner sees only its own harness's.",
        ),
        include_released: z.boolean().optional().describe("Also list released holds."),
        limit: z.number().int().min(1).max(1000).optional().describe("At most this many released holds."),
      },
    },
    ({ harness, include_released, limit }) =>
      session.guard("list_holds", async () => {
        const scoped = scopedHarness(session, harness);
        const r = await rules.listHolds(
          create(ListHoldsRequestSchema, {
            harness: scoped ?? "",
            includeReleased: include_released ?? false,
            limit: limit ?? 0,
          }),
          gatewayContext("listHolds"),
        );
        return dataResult("list_holds", capped(json(ListHoldsResponseSchema, r), "holds"));
      }),
  );
}

/** An RFC 3339 time as ms, or 0 for none. */
export function sinceMsOf(since: string | undefined): number {
  if (since === undefined || since === "") return 0;
  const ms = Date.parse(since);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(ms) || ms < 0)
    throw new ToolInputError(
      `since ${JSON.stringify(since)} is not an RFC 3339 time such as "2026-12-01T00:00:00Z"`,
    );
  return ms;
}
