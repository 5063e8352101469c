/**
 * What a gateway tool hands back. Everything read out of the store is wrapped as untrusted memory data
 * (`proposals/memory-data.ts`, SPEC-0027's wrapper): journal identifiers are chosen by agents, so a
 * model must read them as data. The answer is the wrapper twice: as `structuredContent`, which the
 * tool's `outputSchema` (`wrappedOutput`) describes, and as JSON in a text block for clients older than
 * structured output. Two caps bound an answer: each string is cut to `MAX_STRING_CHARS` (per item), and
 * a list keeps the items that fit in `MAX_RESULT_BYTES` of JSON (in total), saying when it left some
 * out. An error names what refused the call and the tool or argument to use instead; it is a tool
 * error (`isError`), which carries no structured content and is not checked against the outputSchema.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type SentinelError, SentinelError as SentinelErrorClass } from "../errors.js";
import { MEMORY_DATA_NOTICE, type MemoryData, wrapMemoryData } from "../proposals/memory-data.js";

/** Per item: the longest string an answer carries (a journal path is at most 1,024 characters). */
export const MAX_STRING_CHARS = 2_048;
/** In total: the most JSON one answer carries. */
export const MAX_RESULT_BYTES = 512 * 1024;

/** `value` with every string over the per-item cap cut, saying how much was cut. */
export function capStrings(value: unknown): unknown {
  if (typeof value === "string")
    return value.length <= MAX_STRING_CHARS
      ? value
      : `${value.slice(0, MAX_STRING_CHARS)}…[${value.length - MAX_STRING_CHARS} more characters]`;
  if (Array.isArray(value)) return value.map(capStrings);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capStrings(v)]));
  return value;
}

/** The longest prefix of `items` whose JSON fits the total cap beside `reserved` bytes. */
export function withinTotal<T>(
  items: readonly T[],
  reserved = 4096,
): { readonly kept: T[]; readonly truncated: boolean } {
  let bytes = reserved;
  const kept: T[] = [];
  for (const item of items) {
    bytes += Buffer.byteLength(JSON.stringify(item), "utf8") + 1;
    if (bytes > MAX_RESULT_BYTES) return { kept, truncated: true };
    kept.push(item);
  }
  return { kept, truncated: false };
}

/** A tool's answer: the data, capped, wrapped as untrusted memory data. */
export function dataResult(source: string, data: unknown): CallToolResult {
  return wrappedResult(wrapMemoryData(source, capStrings(data)));
}

/** An answer already wrapped (propose_rule's intake wraps its own), as structured content and text. */
export function wrappedResult(wrapped: MemoryData<unknown>): CallToolResult {
  return {
    structuredContent: wrapped as unknown as Record<string, unknown>,
    content: [{ type: "text", text: JSON.stringify(wrapped, null, 2) }],
  };
}

/**
 * A tool's outputSchema: the memory-data wrapper around `data`. Structured content carries the wrapper,
 * not the bare data, because many clients hand `structuredContent` to the model in place of the text:
 * the notice that the data is untrusted must travel with the data on either path.
 */
export function wrappedOutput(source: string, data: z.ZodType) {
  return {
    harness_memory_data: z.object({
      version: z.literal(1),
      source: z.literal(source),
      trust: z.literal("untrusted"),
      notice: z.literal(MEMORY_DATA_NOTICE),
      data,
    }),
  };
}

/** What a miner should change after each named refusal. */
const NEXT_STEP: Readonly<Partial<Record<SentinelError["sentinel"], string>>> = {
  invalid_proposal_level: 'Set level to "annotate" or "notify": a proposal can never hold or stop a harness.',
  rule_schema:
    "Fix the field named above (REQ-3's rule file schema) and call again; backtest_rule checks a rule without storing it.",
  compile:
    "Fix `when` at the line and column named above (they count in the rule file the fields make, where `when` is on line 4) and call again.",
  cost_estimate:
    "Make `when` cheaper: fewer comprehensions over lists, fewer primitive calls (each costs 100 of the 5,000 units).",
  unknown_evidence:
    "Give only ids the store holds: seq:<n> from query_journal, f-<seq>-<n> from list_fires, <harness>#<run id> runs, or graph node ids.",
  proposal_run_limit: "This run may store no more proposals; stop proposing.",
  proposal_backlog_full:
    "Too many proposals await review; stop proposing until the operator has turned some into pull requests.",
  backtest_busy: "Both backtest slots are busy; wait a little and call again.",
  since_too_long: "Pass a smaller since_days.",
  invalid_argument: "Change the argument named above and call again.",
  unknown_rule: "Call list_rules for the names of the rules in force.",
  unknown_fire: "Call list_fires for the fire ids you may explain.",
};

/** A refusal as a tool error: the sentinel, the daemon's reason, and what to change. */
export function errorResult(thrown: unknown): CallToolResult {
  // RuleService's handlers throw ConnectErrors carrying the sentinel: say the sentinel and the code.
  const code =
    thrown instanceof ConnectError
      ? ` (${Code[thrown.code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()})`
      : "";
  const e =
    thrown instanceof ConnectError && thrown.cause instanceof SentinelErrorClass ? thrown.cause : thrown;
  let text: string;
  if (e instanceof SentinelErrorClass) {
    const next = NEXT_STEP[e.sentinel];
    const said = withoutCli(e.message);
    const message = said.includes(e.sentinel) ? said : `${e.sentinel}: ${said}`;
    text = `${message}${code}${next === undefined ? "" : `\n${next}`}`;
  } else if (e instanceof ToolInputError) text = e.message;
  else if (e instanceof ConnectError) text = `${e.rawMessage}${code}`;
  else text = `the gateway failed: ${(e as Error).message}`;
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * The daemon's messages are shared with the CLI, and a few name an operator's command; an agent may
 * have no CLI, so the gateway says what those commands do instead.
 */
const CLI_MENTIONS: readonly (readonly [RegExp, string])[] = [
  [/ \(see harness rules list\)/, ""],
  [/; harness rules propose must take some first/, "; the operator must turn some into pull requests first"],
];

const withoutCli = (message: string): string =>
  CLI_MENTIONS.reduce((m, [pattern, instead]) => m.replace(pattern, instead), message);

/** A tool argument refused before the daemon is asked: its message says what to change. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolInputError";
  }
}

/** MCP tool annotations: the read tools only read the store, and no tool reaches outside it. */
export const READ_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** propose_rule stores a proposal (or, with dry_run, nothing); it never overwrites or deletes. */
export const PROPOSE_ANNOTATIONS = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
} as const;
