/**
 * The gateway's read tools over RuleService (SPEC-0029 REQ-15, REQ-17: the gateway uses RuleService's
 * handlers, never a private path): list_rules, get_rule, list_fires, explain_fire, list_holds. Each
 * calls the handler the ConnectRPC server serves, in this process, and returns its answer as JSON
 * wrapped as untrusted memory data. A rule miner sees every harness's fires and holds; any other
 * caller only its own harness's, whatever it asks for.
 */
import { create } from "@bufbuild/protobuf";
import { createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { UnknownFireError } from "../errors.js";
import {
  ExplainFireRequestSchema,
  ExplainFireResponseSchema,
  type FireInfo,
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
import { dataResult, READ_ANNOTATIONS, ToolInputError, withinTotal, wrappedOutput } from "./tool-results.js";
import {
  EXPLAIN_FIRE,
  explainFireOf,
  FIRE,
  fireOf,
  GET_RULE,
  getRuleOf,
  HOLD_RECORD,
  holdRecordOf,
  page,
  RULE,
  ruleOf,
} from "./tool-shapes.js";

const NAME = z.string().max(256);
/** The most any list RuleService answers holds (a `limit` above it is refused). */
const MAX_LIST = 1000;
const CURSOR = z
  .string()
  .max(64)
  .optional()
  .describe("The next_cursor of the previous answer, to continue it (with the same other arguments).");

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

/** Whether the caller may see this fire: a miner any, any other caller only its own harness's. */
const mayExplain = (session: SessionContext, fire: Pick<FireInfo, "harness"> | undefined): boolean =>
  session.miner || (fire !== undefined && fire.harness === session.caller.harness);

/** A cursor the gateway made: a non-negative integer, as a string. */
function cursorNumber(cursor: string | undefined, what: string): number | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d{1,15}$/.test(cursor))
    throw new ToolInputError(
      `cursor ${JSON.stringify(cursor.slice(0, 64))} is not a next_cursor ${what} gave; leave cursor out to start again`,
    );
  return Number(cursor);
}

export function registerRuleTools(server: McpServer, session: SessionContext): void {
  const { rules } = session.deps;

  /** Whether a fire is the caller's own harness's, as explain_fire would judge it. */
  const ownFire = async (fireId: string): Promise<boolean> => {
    try {
      const r = create(
        ExplainFireResponseSchema,
        await rules.explainFire(create(ExplainFireRequestSchema, { fireId }), gatewayContext("explainFire")),
      );
      return mayExplain(session, r.fire);
    } catch {
      // Pruned or gone since: nothing the caller could explain.
      return false;
    }
  };

  /** A rule as the caller may see it: its last fire only when the caller may explain that fire. */
  const visible = async (rule: ReturnType<typeof ruleOf>): Promise<ReturnType<typeof ruleOf>> => {
    if (rule.last_fire_id === undefined || session.miner || (await ownFire(rule.last_fire_id))) return rule;
    const { last_fire_id: _id, last_fire_at: _at, ...rest } = rule;
    return rest;
  };

  server.registerTool(
    "list_rules",
    {
      annotations: READ_ANNOTATIONS,
      title: "List the rules",
      description:
        "The rules in force, in name order: for each its name, source, on kind, declared and effective level, state (shadow, active or disabled with its reason), hash, fires in the last 24 hours and 7 days, and its last fire when it is one you may explain. Ids are strings, times RFC 3339, durations in ms (keys ending _ms).",
      inputSchema: { cursor: CURSOR },
      outputSchema: wrappedOutput("list_rules", page("rules", RULE)),
    },
    ({ cursor }) =>
      session.guard("list_rules", async () => {
        const r = create(
          ListRulesResponseSchema,
          await rules.listRules(create(ListRulesRequestSchema, {}), gatewayContext("listRules")),
        );
        // Rules come in name order, so the last name given is where the next page starts.
        const after = cursor ?? "";
        const listed = [];
        for (const info of r.rules.filter((x) => x.name > after)) listed.push(await visible(ruleOf(info)));
        const { kept, truncated } = withinTotal(listed);
        return dataResult("list_rules", {
          rules: kept,
          truncated,
          ...(truncated ? { next_cursor: kept.at(-1)?.name ?? after } : {}),
        });
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
      outputSchema: wrappedOutput("get_rule", GET_RULE),
    },
    ({ name }) =>
      session.guard("get_rule", async () => {
        const r = create(
          GetRuleResponseSchema,
          await rules.getRule(create(GetRuleRequestSchema, { name }), gatewayContext("getRule")),
        );
        // Holds name harnesses: a caller that is not a miner sees only its own harness's.
        const holds = session.miner ? r.holds : r.holds.filter((h) => h.harness === session.caller.harness);
        const result = getRuleOf(r, holds);
        return dataResult("get_rule", { ...result, rule: await visible(result.rule) });
      }),
  );

  server.registerTool(
    "list_fires",
    {
      annotations: READ_ANNOTATIONS,
      title: "List fires",
      description:
        "The fire log, newest first: each fire's id (fire_id, f-<seq>-<n>, a string), rule, journal seq (a number) and time (RFC 3339), target, levels, mode, action and message. Filter by rule, harness and time; at most 1,000 a call. When truncated, pass next_cursor as cursor for older fires.",
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
          .max(MAX_LIST)
          .optional()
          .describe("At most this many fires (default 100)."),
        cursor: CURSOR,
      },
      outputSchema: wrappedOutput("list_fires", page("fires", FIRE)),
    },
    ({ rule, harness, since, limit, cursor }) =>
      session.guard("list_fires", async () => {
        const scoped = scopedHarness(session, harness);
        const before = cursorNumber(cursor, "list_fires");
        const r = create(
          ListFiresResponseSchema,
          await rules.listFires(
            create(ListFiresRequestSchema, {
              rule: rule ?? "",
              harness: scoped ?? "",
              sinceMs: BigInt(sinceMsOf(since)),
              limit: limit ?? 0,
              ...(before === undefined ? {} : { beforeSeq: BigInt(before) }),
            }),
            gatewayContext("listFires"),
          ),
        );
        const fires = r.fires.map(fireOf);
        const fit = withinTotal(fires);
        let kept = fit.kept;
        let next = r.truncated ? Number(r.nextBeforeSeq) : undefined;
        if (fit.truncated) {
          // Cut at a row boundary, as the daemon does, so the cursor loses no fire of a row; a row whose
          // fires alone pass the cap (hundreds of rules firing on one row) is cut, its rest skipped.
          const cut = fires[kept.length]?.seq ?? 0;
          const whole = kept.filter((f) => f.seq !== cut);
          kept = whole.length > 0 ? whole : kept;
          next = whole.length > 0 ? cut + 1 : cut;
        }
        return dataResult("list_fires", {
          fires: kept,
          truncated: next !== undefined,
          ...(next === undefined ? {} : { next_cursor: String(next) }),
        });
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
      outputSchema: wrappedOutput("explain_fire", EXPLAIN_FIRE),
    },
    ({ fire_id }) =>
      session.guard("explain_fire", async () => {
        const r = create(
          ExplainFireResponseSchema,
          await rules.explainFire(
            create(ExplainFireRequestSchema, { fireId: fire_id }),
            gatewayContext("explainFire"),
          ),
        );
        // Another harness's fire (or loop stop) is, to a caller that may not see it, a fire that does not exist.
        if (!mayExplain(session, r.fire ?? r.guard)) throw new UnknownFireError(fire_id);
        return dataResult("explain_fire", explainFireOf(r));
      }),
  );

  server.registerTool(
    "list_holds",
    {
      annotations: READ_ANNOTATIONS,
      title: "List holds",
      description:
        "The holds in force (a held harness is refused new runs until its rule's condition clears or the operator clears it), and with include_released the released ones, newest first, the newest 1,000 at most. When truncated, pass next_cursor as cursor for the rest.",
      inputSchema: {
        harness: NAME.optional().describe(
          "Only this harness's holds. A caller that is not a rule miner sees only its own harness's.",
        ),
        include_released: z.boolean().optional().describe("Also list released holds."),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_LIST)
          .optional()
          .describe("At most this many holds (default 100)."),
        cursor: CURSOR,
      },
      outputSchema: wrappedOutput("list_holds", page("holds", HOLD_RECORD)),
    },
    ({ harness, include_released, limit, cursor }) =>
      session.guard("list_holds", async () => {
        const scoped = scopedHarness(session, harness);
        // Holds are few and RuleService lists them whole (the released ones up to its limit): a cursor
        // is how many this listing has given already.
        const offset = cursorNumber(cursor, "list_holds") ?? 0;
        const size = limit ?? 100;
        const r = create(
          ListHoldsResponseSchema,
          await rules.listHolds(
            create(ListHoldsRequestSchema, {
              harness: scoped ?? "",
              includeReleased: include_released ?? false,
              limit: Math.min(MAX_LIST, offset + size),
            }),
            gatewayContext("listHolds"),
          ),
        );
        const rest = r.holds.slice(offset).map(holdRecordOf);
        const { kept, truncated } = withinTotal(rest.slice(0, size));
        const more = truncated || rest.length > size || (r.truncated && offset + size < MAX_LIST);
        return dataResult("list_holds", {
          holds: kept,
          truncated: more,
          ...(more ? { next_cursor: String(offset + kept.length) } : {}),
        });
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
