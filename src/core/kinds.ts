/**
 * The event kinds rules are written against (SPEC-0029 REQ-4), each with its fields, their CEL types and
 * the bounds every row is held to. This is the one table of input bounds: admission refuses a row that
 * breaks it, the cost estimator assumes it, and so a rule whose estimate fits the limit cannot overrun
 * it on an admitted row.
 */
import { type Layout, layoutOf, type SizeBound, T, type Type } from "../cel/index.js";

export const EVENT_KINDS = ["run_event", "attempt_event", "graph_event", "fact_event", "tick"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const isEventKind = (s: string): s is EventKind => (EVENT_KINDS as readonly string[]).includes(s);

/** Longest identifier-like string a row may carry (names, ids, enums), in code points. */
export const MAX_IDENT = 256;
/** Longest repo-relative path or graph node id, in code points. */
export const MAX_PATH = 1024;
/** A digest is hex SHA-256. */
export const MAX_DIGEST = 64;
export const MAX_PATHS = 64;
export const MAX_PARTICIPANTS = 16;

export interface FieldSpec {
  readonly type: Type;
  readonly size?: SizeBound;
}

const ident: FieldSpec = { type: T.string, size: { max: MAX_IDENT } };
const path: FieldSpec = { type: T.string, size: { max: MAX_PATH } };
const digest: FieldSpec = { type: T.string, size: { max: MAX_DIGEST } };
const flag: FieldSpec = { type: T.bool };
const at: FieldSpec = { type: T.timestamp };

const paths: FieldSpec = { type: T.list(T.string), size: { max: MAX_PATHS, elem: { max: MAX_PATH } } };

/** REQ-4's run_event fields. */
const RUN_FIELDS: Readonly<Record<string, FieldSpec>> = {
  type: ident,
  at,
  harness: ident,
  run: ident,
  adapter: ident,
  repo: path,
  branch: path,
  session: ident,
  tool: ident,
  action: ident,
  is_error: flag,
  digest,
  paths,
  mark: ident,
  trigger: ident,
  outcome: ident,
  reason: ident,
  exit_code: { type: T.int },
  cause_digest: digest,
  // Beyond REQ-4: the subagent a hook-fed row came from (Claude Code's `agent_id`, `agent_type`).
  subagent_id: ident,
  subagent_type: ident,
};

/** What a run_event knows only once the call ran (`is_error`, `exit_code`) or at other times than a call. */
const AFTER_OR_BESIDE_THE_CALL = new Set([
  "is_error",
  "mark",
  "trigger",
  "outcome",
  "reason",
  "exit_code",
  "cause_digest",
]);

/**
 * A tool call about to run (an agent's PreToolUse): the fields its `tool` row will carry that are known
 * before the call. A kind of its own, not a type of `run_event`: a selector defaults its kind to the
 * rule's `on`, so `count({"tool": "Bash"}, …)` on run_event would otherwise count each call twice
 * (docs/decisions/0005-attempt-event.md).
 */
const ATTEMPT_FIELDS: Readonly<Record<string, FieldSpec>> = Object.fromEntries(
  Object.entries(RUN_FIELDS).filter(([name]) => !AFTER_OR_BESIDE_THE_CALL.has(name)),
);

/** REQ-4's fields per kind. Every event carries `type` and `at` (the source's own time). */
export const EVENT_FIELDS: Readonly<Record<EventKind, Readonly<Record<string, FieldSpec>>>> = {
  run_event: RUN_FIELDS,
  attempt_event: ATTEMPT_FIELDS,
  graph_event: {
    type: ident,
    at,
    edge: ident,
    from: path,
    to: path,
    repo: path,
    branch: path,
    path,
    harness: ident,
    run: ident,
    scope: ident,
    harnesses: { type: T.list(T.string), size: { max: MAX_PARTICIPANTS, elem: { max: MAX_IDENT } } },
    runs: { type: T.list(T.string), size: { max: MAX_PARTICIPANTS, elem: { max: MAX_IDENT } } },
  },
  fact_event: {
    type: ident,
    at,
    fact: ident,
    kind: ident,
    predicate: ident,
    scope: path,
    status: ident,
    previous_status: ident,
    reason: ident,
    stance: ident,
    subject: path,
    repo: path,
    untrusted: flag,
    harness: ident,
    run: ident,
  },
  tick: { type: ident, at },
};

/** The object type's name in CEL error messages and `type(event)`. */
export const EVENT_TYPE_NAMES: Readonly<Record<EventKind, string>> = {
  run_event: "harness.rules.RunEvent",
  attempt_event: "harness.rules.AttemptEvent",
  graph_event: "harness.rules.GraphEvent",
  fact_event: "harness.rules.FactEvent",
  tick: "harness.rules.Tick",
};

/**
 * Each kind's fields in their declared order: the activation decodes a row's event into its kind's
 * layout once, and every rule reads a field from its slot (the environments declare the same fields).
 */
export const EVENT_LAYOUTS: Readonly<Record<EventKind, Layout>> = {
  run_event: layoutOf(EVENT_FIELDS.run_event) as Layout,
  attempt_event: layoutOf(EVENT_FIELDS.attempt_event) as Layout,
  graph_event: layoutOf(EVENT_FIELDS.graph_event) as Layout,
  fact_event: layoutOf(EVENT_FIELDS.fact_event) as Layout,
  tick: layoutOf(EVENT_FIELDS.tick) as Layout,
};
