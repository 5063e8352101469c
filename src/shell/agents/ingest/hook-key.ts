/**
 * A hook call's idempotency key and its run, from the payload's own ids: so a call delivered twice (a
 * live request the daemon answered too late, then its spooled copy) is admitted once, and the spool
 * keeps each run's calls in order. The forwarder and the daemon's http endpoint derive the same key
 * from the same payload. Node built-ins only (and types): the forwarder's import graph stays small.
 *
 * Only ids that name one call are used (docs/agents-mapping.md#idempotency), as each hook format
 * lists them (`hook-format.ts`): a tool call's id, a prompt's, a notify's turn. SessionStart, Stop and
 * SessionEnd carry none (a resumed session starts again under the same id), so the command hook makes a
 * key for those from a nonce of its own, and the http path, which has no forwarder, sends them unkeyed.
 * The nonce is the call's: the fast path (`harness-hook.sh`) sends it, and hands it to the forwarder
 * when that takes the call over, so both derive the same key without the script parsing the payload.
 */
import { createHash, randomUUID } from "node:crypto";
import type { HookFormat } from "./hook-format.js";

type Payload = Readonly<Record<string, unknown>>;

/** The longest id read from a payload: longer ones are not an agent's ids, and give no key. */
const MAX_ID = 1024;

const id = (p: Payload, key: string): string | undefined => {
  const v = p[key];
  return typeof v === "string" && v !== "" && v.length <= MAX_ID ? v : undefined;
};

/** The session and event names of a payload, where its format says they are. */
function names(format: KeyedFormat, p: Payload): { session: string; event: string } | undefined {
  const session = id(p, format.ids.session);
  const event = id(p, format.ids.event);
  return session === undefined || event === undefined ? undefined : { session, event };
}

/** The one id that names this call among the session's, or undefined when the payload has none. */
function callId(format: KeyedFormat, event: string, p: Payload): string | undefined {
  for (const call of format.ids.calls) {
    if (call.events !== undefined && !call.events.includes(event)) continue;
    const value = id(p, call.key);
    if (value !== undefined) return `${call.prefix}${value}`;
  }
  return undefined;
}

/** What of a hook format the keys read: its name and where its payloads name their ids. */
export type KeyedFormat = Pick<HookFormat, "name" | "ids">;

/** The key the payload's own ids give (at most 69 characters), or undefined. */
export function payloadKey(format: KeyedFormat, harness: string, p: Payload): string | undefined {
  const n = names(format, p);
  const call = n === undefined ? undefined : callId(format, n.event, p);
  if (n === undefined || call === undefined) return undefined;
  const digest = createHash("sha256")
    .update(JSON.stringify([format.name, harness, n.session, n.event, call]))
    .digest("hex");
  return `hook:${digest}`;
}

/** A call nonce as the command hook makes one: a UUID, or 32 hex digits from /dev/urandom. */
const CALL_NONCE = /^[0-9a-f-]{16,64}$/;

export const isCallNonce = (s: string): boolean => CALL_NONCE.test(s);

/** A call's key: the payload's own, or the one its nonce makes. */
export const callKey = (format: KeyedFormat, harness: string, p: Payload, nonce: string): string =>
  payloadKey(format, harness, p) ?? `hook:call:${nonce}`;

/** The forwarder's key for a call: `callKey` with the nonce it was handed, or one made for it alone. */
export const forwarderKey = (format: KeyedFormat, harness: string, p: Payload, nonce?: string): string =>
  callKey(format, harness, p, nonce ?? randomUUID());

/** The run a call belongs to, `<harness>#<session>`, or undefined when the payload names no session. */
export function runOf(format: KeyedFormat, harness: string, p: Payload): string | undefined {
  const session = names(format, p)?.session;
  return session === undefined ? undefined : `${harness}#${session}`;
}
