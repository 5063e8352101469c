/**
 * A hook call's idempotency key and its run, from the payload's own ids: so a call delivered twice (a
 * live request the daemon answered too late, then its spooled copy) is admitted once, and the spool
 * keeps each run's calls in order. The forwarder and the daemon's http endpoint derive the same key
 * from the same payload. Node built-ins only: the forwarder's import graph stays small.
 *
 * Only ids that name one call are used (docs/agents-mapping.md#idempotency): a tool call's
 * `tool_use_id`, a prompt's `prompt_id` (Claude Code) or `turn_id` (Codex), a notify's `turn-id`.
 * SessionStart, Stop and SessionEnd carry none (a resumed session starts again under the same id), so
 * the forwarder makes a key for those, and the http path, which has no forwarder, sends them unkeyed.
 */
import { createHash, randomUUID } from "node:crypto";

type Payload = Readonly<Record<string, unknown>>;

/** The longest id read from a payload: longer ones are not an agent's ids, and give no key. */
const MAX_ID = 1024;

const id = (p: Payload, key: string): string | undefined => {
  const v = p[key];
  return typeof v === "string" && v !== "" && v.length <= MAX_ID ? v : undefined;
};

/** The session and event names of a payload, by adapter: Codex's notify names them its own way. */
function names(adapter: string, p: Payload): { session: string; event: string } | undefined {
  const session = id(p, adapter === "codex-notify" ? "thread-id" : "session_id");
  const event = id(p, adapter === "codex-notify" ? "type" : "hook_event_name");
  return session === undefined || event === undefined ? undefined : { session, event };
}

/** The one id that names this call among the session's, or undefined when the payload has none. */
function callId(adapter: string, event: string, p: Payload): string | undefined {
  if (adapter === "codex-notify") return id(p, "turn-id");
  const tool = id(p, "tool_use_id");
  if (tool !== undefined) return `tool:${tool}`;
  if (event !== "UserPromptSubmit") return undefined;
  const prompt = id(p, adapter === "codex" ? "turn_id" : "prompt_id");
  return prompt === undefined ? undefined : `prompt:${prompt}`;
}

/** The key the payload's own ids give (at most 69 characters), or undefined. */
export function payloadKey(adapter: string, harness: string, p: Payload): string | undefined {
  const n = names(adapter, p);
  const call = n === undefined ? undefined : callId(adapter, n.event, p);
  if (n === undefined || call === undefined) return undefined;
  const digest = createHash("sha256")
    .update(JSON.stringify([adapter, harness, n.session, n.event, call]))
    .digest("hex");
  return `hook:${digest}`;
}

/** The forwarder's key for a call: the payload's own, or one made for this call alone. */
export const forwarderKey = (adapter: string, harness: string, p: Payload): string =>
  payloadKey(adapter, harness, p) ?? `hook:call:${randomUUID()}`;

/** The run a call belongs to, `<harness>#<session>`, or undefined when the payload names no session. */
export function runOf(adapter: string, harness: string, p: Payload): string | undefined {
  const session = names(adapter, p)?.session;
  return session === undefined ? undefined : `${harness}#${session}`;
}
