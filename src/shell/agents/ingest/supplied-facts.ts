/**
 * Git facts computed on the agent's machine (decision 0017): a remote daemon cannot see the agent's
 * disk, so the command forwarder of a remote install reads the repository, branch and repo-relative
 * paths there (`git-facts.ts`, `repo-paths.ts`, the same code and bounds the daemon uses) and sends them
 * with the call, with its own clock, in an envelope around the agent's payload:
 * `{"v":1,"clock":MS,"facts":{"repo":…,"branch":…,"paths":[…]},"payload":{…}}`, marked by
 * `HOOK_FACTS_HEADER`. The daemon never runs git for such a call, nor for any call over TLS.
 *
 * Trust: the facts come with the harness's own observer token, which may already append that
 * harness's rows with any repo, branch and paths (`JournalService.Append`); facts give no more power.
 * They are bounded like every other input: a fact past the journal's bounds, or a path that is not a
 * plain relative path, is dropped (never the row), and an envelope that is not one is refused.
 * Node built-ins only: the forwarder's import graph stays small.
 */
import { MAX_RAW_PATHS, ROW_IDENT, ROW_PATH, ROW_PATHS } from "./payload-bounds.js";

export interface SuppliedFacts {
  readonly repo?: string;
  readonly branch?: string;
  /** Relative to the repository's top level, `/`-separated. */
  readonly paths?: readonly string[];
}

export interface Envelope {
  readonly payload: Readonly<Record<string, unknown>>;
  readonly facts: SuppliedFacts;
  /** The agent machine's clock when the hook received the call, ms since the epoch. */
  readonly clock?: number;
}

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Surrogate}/u;
/** The latest time a JavaScript date holds. */
const MAX_DATE_MS = 8.64e15;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `s` when it is text of 1 to `max` code points with no control character, else undefined. */
function bounded(s: unknown, max: number): string | undefined {
  if (typeof s !== "string" || s === "" || s.length > 2 * max) return undefined;
  if (CONTROL.test(s) || LONE_SURROGATE.test(s) || [...s].length > max) return undefined;
  return s;
}

/** A repo-relative path: no leading `/`, no empty, `.` or `..` segment, no backslash. */
function relativePath(p: unknown): string | undefined {
  const s = bounded(p, ROW_PATH);
  if (s === undefined || s.includes("\\")) return undefined;
  return s.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..") ? s : undefined;
}

/** The facts a caller sent, each kept only within its bound. */
export function boundFacts(v: unknown): SuppliedFacts {
  if (!isObject(v)) return {};
  const repo = bounded(v.repo, ROW_IDENT);
  const branch = bounded(v.branch, ROW_IDENT);
  const paths: string[] = [];
  if (Array.isArray(v.paths))
    for (const raw of v.paths.slice(0, MAX_RAW_PATHS)) {
      if (paths.length >= ROW_PATHS) break;
      const p = relativePath(raw);
      if (p !== undefined && !paths.includes(p)) paths.push(p);
    }
  return {
    ...(repo === undefined ? {} : { repo }),
    ...(branch === undefined ? {} : { branch }),
    ...(Array.isArray(v.paths) ? { paths } : {}),
  };
}

/** The envelope in a parsed body, or why it is not one. */
export function openEnvelope(v: unknown): Envelope | string {
  if (!isObject(v) || v.v !== 1) return "the body is not a facts envelope (v 1)";
  if (!isObject(v.payload)) return "the envelope's payload is not a JSON object";
  const clock = v.clock;
  return {
    payload: v.payload,
    facts: boundFacts(v.facts),
    ...(typeof clock === "number" && Number.isSafeInteger(clock) && clock > 0 && clock <= MAX_DATE_MS
      ? { clock }
      : {}),
  };
}

/** The envelope's bytes around `payload` (a JSON object's text, sent as the agent gave it). */
export function envelopeBody(payload: Uint8Array, facts: SuppliedFacts, clock: number): Buffer {
  return Buffer.concat([
    Buffer.from(`{"v":1,"clock":${clock},"facts":${JSON.stringify(facts)},"payload":`),
    payload,
    Buffer.from("}"),
  ]);
}
