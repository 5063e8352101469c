/**
 * What one agent hook call means to the journal, whichever agent sent it: at most one row (its source,
 * type and fields, its paths still as the agent wrote them). Each agent's adapter
 * (`../adapters/`) builds it from the payload; `ingest.ts` adds the run, the git facts and the time, and
 * admits it. The helpers below read a payload's fields within `payload-bounds.ts`.
 */
import type { ToolClass } from "./classify.js";
import {
  MAX_CWD,
  MAX_CWD_DEPTH,
  MAX_EVENT_NAME,
  MAX_RESPONSE_PREFIX,
  MAX_SUBAGENT_FIELD,
  withinDepth,
} from "./payload-bounds.js";

/** A payload key whose value names one call among its session's. */
export interface CallId {
  readonly key: string;
  /** Written before the id in the call's key, so ids of different keys never meet. */
  readonly prefix: string;
  /** The events it names a call of; every event when absent. */
  readonly events?: readonly string[];
}

/** Where a payload names its session, its event and, for some events, the call itself. */
export interface HookIds {
  readonly session: string;
  readonly event: string;
  /** Tried in order: the first that applies to the event and is present names the call. */
  readonly calls: readonly CallId[];
}

/** A subagent's id and type as its agent names them, each within the journal's identifier bound. */
export interface Subagent {
  readonly id?: string;
  readonly type?: string;
}

export type MarkType = "user-message" | "compaction" | "subagent" | "turn-end";

export type RowPlan =
  | { readonly source: "ledger"; readonly type: "opened"; readonly trigger?: string }
  | { readonly source: "ledger"; readonly type: "closed"; readonly outcome: string; readonly reason: string }
  | { readonly source: "observer"; readonly type: "mark"; readonly mark: MarkType }
  | {
      readonly source: "observer";
      readonly type: "tool";
      readonly tool: string;
      readonly action: ToolClass;
      readonly isError: boolean;
      readonly digest?: string;
      /** As the call wrote them: absolute, or relative to `cwd`. */
      readonly paths: readonly string[];
    }
  | {
      /** A tool call about to run: an `attempt_event` row, its tool row's fields known before the call. */
      readonly source: "observer";
      readonly type: "attempt";
      readonly tool: string;
      readonly action: ToolClass;
      readonly digest?: string;
      readonly paths: readonly string[];
    };

/**
 * What a verdict may refuse at a call: `tool` a tool about to run (PreToolUse), `prompt` a prompt about
 * to be processed, `turn` nothing but the turn's going on (any other event of a stopped run).
 */
export type Gate = "tool" | "prompt" | "turn";

export interface HookEvent {
  /** The hook's event name as the agent sent it. */
  readonly event: string;
  readonly session: string;
  readonly cwd?: string;
  readonly row?: RowPlan;
  /** The subagent the call came from, when the payload names one: its row carries them. */
  readonly subagent?: Subagent;
  /** Set for an event this adapter does not know: the call is answered, nothing is recorded. */
  readonly unknown?: true;
}

export type Mapped =
  | { readonly ok: true; readonly hook: HookEvent }
  | { readonly ok: false; readonly problem: string };

export type Payload = Readonly<Record<string, unknown>>;

const CONTROL = /\p{Cc}/u;
/** An unpaired half of a surrogate pair: no Unicode text, so admission would refuse the whole row. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** 256 code points are at most 512 UTF-16 units: a longer id is refused at admission, unscanned. */
const MAX_SESSION_SCANNED = 512;

/** A payload's string field, or undefined when absent or not a string. */
export const str = (p: Payload, key: string): string | undefined => {
  const v = p[key];
  return typeof v === "string" ? v : undefined;
};

/**
 * The session id and event name every payload must carry, or why the payload cannot be used. A session
 * id past the journal's bound (256) is left to admission, which refuses its row and counts it; it is
 * not scanned here.
 */
export function sessionOf(
  p: Payload,
  sessionKey: string,
  eventKey: string,
): { session: string; event: string } | { problem: string } {
  const session = str(p, sessionKey);
  if (session === undefined || session === "") return { problem: `the payload has no string ${sessionKey}` };
  if (session.length <= MAX_SESSION_SCANNED && CONTROL.test(session))
    return { problem: `${sessionKey} holds a control character` };
  const event = str(p, eventKey);
  if (event === undefined || event === "") return { problem: `the payload has no string ${eventKey}` };
  if (event.length > MAX_EVENT_NAME)
    return { problem: `${eventKey} is longer than ${MAX_EVENT_NAME} characters` };
  return { session, event };
}

/** A non-empty Unicode string without control characters within the journal's identifier bound; else undefined. */
const identOf = (p: Payload, key: string): string | undefined => {
  const v = str(p, key);
  if (v === undefined || v === "" || v.length > MAX_SUBAGENT_FIELD * 2) return undefined;
  return [...v].length <= MAX_SUBAGENT_FIELD && !CONTROL.test(v) && !LONE_SURROGATE.test(v) ? v : undefined;
};

/**
 * The subagent a payload says it comes from (`agent_id`, `agent_type`), or undefined outside one. A value
 * that is not a short identifier is left out rather than refusing the row: the call is still recorded.
 */
export function subagentOf(p: Payload): Subagent | undefined {
  const id = identOf(p, "agent_id");
  const type = identOf(p, "agent_type");
  if (id === undefined && type === undefined) return undefined;
  return { ...(id === undefined ? {} : { id }), ...(type === undefined ? {} : { type }) };
}

/**
 * The working directory a payload names, when it is an absolute path within `MAX_CWD` characters and
 * `MAX_CWD_DEPTH` components; any other is ignored (the row has no repo facts), checked before it is
 * scanned.
 */
export const cwdOf = (p: Payload): string | undefined => {
  const cwd = str(p, "cwd");
  if (cwd === undefined || cwd.length > MAX_CWD || !cwd.startsWith("/")) return undefined;
  return withinDepth(cwd, MAX_CWD_DEPTH) && !CONTROL.test(cwd) ? cwd : undefined;
};

/**
 * Whether a tool's response reports a failure the event did not: a non-zero exit code (`exit_code`,
 * `exitCode`), `is_error`/`isError` true, `success` false, or a text answer opening `Exit code: N`.
 * Only these flags are read; the response's text is never kept.
 */
export function responseFailed(response: unknown): boolean {
  if (typeof response === "string") {
    const m = /^Exit code:? (-?\d+)/.exec(response.slice(0, MAX_RESPONSE_PREFIX));
    return m !== null && Number(m[1]) !== 0;
  }
  if (typeof response !== "object" || response === null || Array.isArray(response)) return false;
  const r = response as Record<string, unknown>;
  if (r.is_error === true || r.isError === true || r.success === false) return true;
  for (const key of ["exit_code", "exitCode"]) {
    const code = r[key];
    if (typeof code === "number" && code !== 0) return true;
  }
  return false;
}

/**
 * Payload keys a row may be built from, beside the format's own ids; everything else (prompts, output,
 * messages) is left behind.
 */
const ROW_KEYS = [
  "cwd",
  "tool_name",
  "tool_input",
  "tool_use_id",
  "source",
  "reason",
  "agent_id",
  "agent_type",
  "turn_id",
  "is_interrupt",
];

/**
 * What of a payload is kept when it must wait (the forwarder's spool): the keys a row is built from, its
 * format's ids, and of `tool_response` only what `responseFailed` reads. Mapping the result gives the
 * same row as the whole payload.
 */
export function rowPayload(p: Payload, ids: HookIds): Payload {
  const out: Record<string, unknown> = {};
  for (const key of [ids.session, ids.event, ...ROW_KEYS, ...ids.calls.map((c) => c.key)])
    if (Object.hasOwn(p, key)) out[key] = p[key];
  if (Object.hasOwn(p, "tool_response"))
    out.tool_response = responseFailed(p.tool_response) ? { is_error: true } : {};
  return out;
}
