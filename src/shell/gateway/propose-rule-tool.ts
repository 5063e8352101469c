/**
 * The gateway's propose_rule tool (SPEC-0029 REQ-15), registered only for a rule miner's run. It hands
 * the fields to `ProposalIntake.propose` in the daemon's process, with the caller's run as its token
 * names it, and returns what that returns (already wrapped as untrusted memory data). The intake makes
 * every check. The input schema declares the limits the intake enforces (enums, maxLength, maxItems) so
 * a client sees them, but leaves the checks whose refusal names more than a schema error would to the
 * intake: a level of "stop" reaches it and comes back invalid_level, 51 evidence ids come back saying
 * the 1 to 50, and a long rationale is refused saying its length. The one bound zod enforces on every
 * text is a size no field can approach, so that a call cannot make the daemon hold much.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EVENT_KINDS } from "../../core/kinds.js";
import { TARGETS } from "../../core/rule-file.js";
import { MAX_EVIDENCE, MAX_EVIDENCE_ID, MAX_RATIONALE_CHARS } from "../proposals/propose-rule.js";
import type { SessionContext } from "./session-context.js";
import {
  errorResult,
  PROPOSE_ANNOTATIONS,
  ToolInputError,
  wrappedOutput,
  wrappedResult,
} from "./tool-results.js";
import { TIME } from "./tool-shapes.js";

/** Far above any value the intake accepts: a bound on what a call may make the daemon hold, not a check. */
const MAX_FIELD_CHARS = 65_536;
const text = (description: string) => z.string().max(MAX_FIELD_CHARS).describe(description);

export const PROPOSE_RULE_INPUT = {
  name: text(
    "The rule's name, also its file name rules/<name>.toml: lowercase letters, digits and '-', starting with a letter, at most 63 characters. Example: \"verify-fails-thrice\".",
  ),
  description: text("One sentence for the operator: what the rule notices and why it matters."),
  on: z
    .enum(EVENT_KINDS)
    .describe(
      "The journal row kind the rule is evaluated on: run_event (tool calls after they ran, marks, runs opened and closed, loop-guard stops), attempt_event (a hook-fed agent's tool call about to run: type, at, harness, run, adapter, repo, branch, session, tool, action, digest, paths; an enforced stop refuses that very call), graph_event, fact_event or tick (once a minute).",
    ),
  when: text(
    'A CEL expression over `event` (the row\'s fields) and `now`, true when the rule should fire. The windowed primitives count(selector, duration("1h")), distinct("field", selector, duration("1h")) and exists(selector, duration("1h")) read the journal: the selector is a map literal of indexed fields (kind, type, harness, run, repo, branch, path, tool, action, is_error, digest, outcome, cause_digest, edge, predicate, status, scope), the window a literal from duration("1m") to duration("168h") (CEL durations have no d unit: a week is 168h). Example: event.type == "closed" && event.outcome == "failed" && count({"type": "closed", "harness": event.harness, "outcome": "failed"}, duration("1h")) >= 3',
  ),
  level: text(
    'What a fire does: "annotate" (a note on the target) or "notify" (the operator\'s hook). A proposal may not hold or stop: any other level is refused with invalid_level.',
  ).meta({ enum: ["annotate", "notify"] }),
  cooldown: text(
    'Optional: how long after a fire the same rule stays quiet for the same target, e.g. "1h" (the default), "30m".',
  ).optional(),
  target: z
    .enum(TARGETS)
    .describe('What the fire is about: "run" (the row\'s run), "harness", "node" (a graph node) or "fleet".'),
  message: text(
    'The message a fire records. Placeholders in double braces are filled in: {{harness}}, {{run}}, {{repo}}, {{branch}}, {{path}} and {{type}} from the row, {{rule}}, {{level}} and {{at}} (the row\'s time) from the fire; no other names are allowed. Example: "{{harness}} failed three runs in an hour (last run {{run}})".',
  ),
  rationale: text(
    `Why this rule is worth having, for the reviewer of its pull request: the pattern you found and what it costs. At most ${MAX_RATIONALE_CHARS} characters: a longer one is refused, never cut.`,
  ).meta({ minLength: 1, maxLength: MAX_RATIONALE_CHARS }),
  evidence: z
    .array(z.string().max(MAX_FIELD_CHARS).meta({ maxLength: MAX_EVIDENCE_ID }))
    .meta({ minItems: 1, maxItems: MAX_EVIDENCE })
    .describe(
      "1 to 50 ids (duplicates count once) of what you found the pattern in, each one the store holds: journal rows (seq:<n>, from query_journal), fires (f-<seq>-<n>, from list_fires), runs (<harness>#<run id>) or graph node ids.",
    ),
  dry_run: z
    .boolean()
    .default(false)
    .describe(
      "true: make every check and the 30-day backtest and answer the same, but store nothing. Use it to try a rule before proposing it.",
    ),
};

const PROPOSAL = z.object({
  id: z.string().optional().describe("p-<n>; absent for a dry run, which stores nothing."),
  dry_run: z.boolean(),
  name: z.string(),
  content_hash: z.string(),
  expression_hash: z.string(),
  advice: z
    .array(
      z.object({
        kind: z.enum(["duplicate_expression", "duplicate_when", "no_fires", "starter_override"]),
        message: z.string(),
        rule: z.string().optional(),
      }),
    )
    .describe("What a reviewer would ask first; never a refusal. Empty when nothing stands out."),
  backtest: z.object({
    since: TIME,
    rows: z.number().int().min(0),
    fires: z.number().int().min(0),
    eval_errors: z.number().int().min(0),
    store_errors: z.number().int().min(0),
    first_fires: z.array(
      z.object({
        seq: z.number().int().min(1),
        at: TIME,
        kind: z.string(),
        type: z.string(),
        target: z.object({ kind: z.string(), key: z.string() }).nullable(),
        level: z.string(),
        message: z.string(),
      }),
    ),
  }),
});

/** The rationale's length as the intake counts it (code points), refused with the length and the limit. */
function checkRationaleLength(rationale: string): void {
  const chars = [...rationale].length;
  if (chars > MAX_RATIONALE_CHARS)
    throw new ToolInputError(
      `invalid_argument: rationale is ${chars} characters; at most ${MAX_RATIONALE_CHARS}. Shorten it and call again: nothing was stored.`,
    );
}

export function registerProposeRule(server: McpServer, session: SessionContext): void {
  server.registerTool(
    "propose_rule",
    {
      annotations: PROPOSE_ANNOTATIONS,
      title: "Propose a rule",
      description:
        "Proposes a new rule for the operator's review. The daemon checks the rule file the fields make (schema, CEL compilation, cost), checks each evidence id, backtests the rule over the last 30 days, and stores it as an untrusted proposal with your run; harness rules propose later opens a pull request for it. Returns its id (p-<n>), content hash, advice and the backtest (fire count and first 10 fires). Ids are strings, seq a number, times RFC 3339. Propose only rules that would have fired on real evidence. One run may store 10 proposals.",
      inputSchema: PROPOSE_RULE_INPUT,
      outputSchema: wrappedOutput("propose_rule", PROPOSAL),
    },
    (args) =>
      session.guard("propose_rule", async () => {
        const run = session.caller.run;
        if (run === undefined) return errorResult(new ToolInputError("propose_rule needs a run's token"));
        const { rationale, evidence, dry_run: dryRun, ...rule } = args;
        checkRationaleLength(rationale);
        const result = await session.deps.proposals.propose({
          callerRun: run,
          rule: {
            name: rule.name,
            description: rule.description,
            on: rule.on,
            when: rule.when,
            level: rule.level,
            ...(rule.cooldown === undefined ? {} : { cooldown: rule.cooldown }),
            target: rule.target,
            message: rule.message,
          },
          rationale,
          evidence,
          dryRun,
        });
        return wrappedResult(result);
      }),
  );
}
