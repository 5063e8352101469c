/**
 * What every RuleService request is held to: list limits, name lengths, time bounds, and the response
 * budget a list must fit in. The proposal methods use the same checks.
 */
import { MAX_IDENT, MAX_PATH } from "../../core/kinds.js";
import { InvalidArgumentError } from "../errors.js";

/** Rows a list returns unless the caller asks for fewer, and the most it may ask for. */
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;

/**
 * The most a list response may carry, estimated from its variable-size fields: under the clients' 4 MiB
 * `readMaxBytes`, since a thousand fires whose messages repeat long paths would not fit in it.
 */
const RESPONSE_BUDGET_BYTES = 3 * 1024 * 1024;
/** A generous allowance for one list entry's fixed-size fields and framing. */
const ENTRY_OVERHEAD_BYTES = 512;

/** The longest prefix of `items` within the response budget, and whether anything was left out. */
export function withinBudget<T>(items: readonly T[], limit: number, texts: (t: T) => readonly string[]) {
  let bytes = 0;
  let n = 0;
  for (const item of items.slice(0, limit)) {
    bytes += ENTRY_OVERHEAD_BYTES;
    for (const t of texts(item)) bytes += Buffer.byteLength(t, "utf8");
    if (bytes > RESPONSE_BUDGET_BYTES) break;
    n++;
  }
  return { kept: items.slice(0, n), truncated: items.length > n };
}

export function limitOf(requested: number, what: string): number {
  if (requested === 0) return DEFAULT_LIST_LIMIT;
  if (requested > MAX_LIST_LIMIT)
    throw new InvalidArgumentError(
      what,
      `limit ${requested} is over the most a ${what} list returns (${MAX_LIST_LIMIT})`,
    );
  return requested;
}

/**
 * The longest name a request may carry. No identifier the journal admits is longer than MAX_IDENT
 * (`kinds.ts`), and rule names and fire ids are shorter still, so a longer one can only be refused. A
 * node id is a prefix and a percent-encoded path of up to MAX_PATH code points, 12 characters each at
 * most.
 */
const MAX_NAME = MAX_IDENT;
export const MAX_NODE = 12 * MAX_PATH + 64;

/** Refuses a name longer than any the daemon holds, echoing only its start. */
export function checkLength(value: string, field: string, max = MAX_NAME): void {
  if (value.length <= max) return;
  const start = `${value.slice(0, 32)}…`;
  throw new InvalidArgumentError(
    start,
    `${field} ${JSON.stringify(start)} is ${value.length} characters long; none the daemon holds is longer than ${max}`,
  );
}

/** A request's lower time bound, ms: not negative, and within what the journal's times can be. */
export function sinceOf(sinceMs: bigint): number {
  if (sinceMs < 0n) throw new InvalidArgumentError("", `since_ms ${sinceMs} is negative`);
  if (sinceMs > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidArgumentError("", `since_ms ${sinceMs} is past any time the journal can hold`);
  return Number(sinceMs);
}
