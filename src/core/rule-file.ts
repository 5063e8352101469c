/**
 * Reading one rule file (SPEC-0029 REQ-3): TOML with exactly the keys of the rule table, each checked
 * against its rule. A file that breaks any of them yields a `schema` problem naming the file, the key,
 * and the line and column where the key stands; it never throws, so one bad file disables one rule.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { DAY, formatDuration, MINUTE, type Millis, parseDuration } from "./durations.js";
import { EVENT_KINDS, type EventKind, isEventKind } from "./kinds.js";
import { tomlErrorMessage } from "./toml-error.js";
import { decodeStringValue, findStringValue, type StringValueSource } from "./toml-string-map.js";

export const LEVELS = ["annotate", "notify", "hold", "stop"] as const;
export type Level = (typeof LEVELS)[number];
export const isLevel = (s: string): s is Level => (LEVELS as readonly string[]).includes(s);
/** Levels are cumulative (REQ-10): a level does what every level below it does, and more. */
export const atLeast = (level: Level, min: Level): boolean => LEVELS.indexOf(level) >= LEVELS.indexOf(min);
export const TARGETS = ["run", "harness", "node", "fleet"] as const;
export type Target = (typeof TARGETS)[number];
export const PLACEHOLDERS = [
  "rule",
  "level",
  "harness",
  "run",
  "repo",
  "branch",
  "path",
  "type",
  "at",
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** Why a rule is not evaluated: a closed set, as `harness rules list` shows it. */
export type DisableReason =
  | "schema"
  | "compile"
  | "cost_estimate"
  | "cost_exceeded"
  | "duplicate_name"
  | "operator";

export interface RuleProblem {
  readonly reason: DisableReason;
  readonly file: string;
  readonly key?: string;
  /** 1-based, where known. */
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** A rule file that passed the schema: a plain description of the rule, not yet compiled. */
export interface RuleSpec {
  readonly file: string;
  readonly name: string;
  readonly description: string;
  readonly on: EventKind;
  readonly when: string;
  readonly level: Level;
  readonly cooldown: Millis;
  readonly target: Target;
  readonly message: string;
  /** The `when` value as written in the file, so CEL positions can be reported against the file. */
  readonly whenSource: StringValueSource | undefined;
}

export type RuleFileResult =
  | { readonly ok: true; readonly spec: RuleSpec }
  | { readonly ok: false; readonly problem: RuleProblem };

export const DEFAULT_COOLDOWN: Millis = 60 * MINUTE;
const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const KEYS = ["name", "description", "on", "when", "level", "cooldown", "target", "message"] as const;
const REQUIRED = ["name", "description", "on", "when", "level", "target", "message"] as const;
const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;

/** Parses `text`, the content of `file` (a path such as `rules/churn.toml`; its basename must be the name). */
export function parseRuleFile(file: string, text: string): RuleFileResult {
  const problem = (key: string | undefined, message: string): RuleFileResult => ({
    ok: false,
    problem: {
      reason: "schema",
      file,
      ...(key === undefined ? {} : { key, ...keyPosition(text, key) }),
      message,
    },
  });
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) {
      return {
        ok: false,
        problem: {
          reason: "schema",
          file,
          line: e.line,
          column: e.column,
          message: tomlErrorMessage(e, text),
        },
      };
    }
    return problem(undefined, `invalid TOML: ${String(e)}`);
  }
  for (const key of Object.keys(doc)) {
    if (!(KEYS as readonly string[]).includes(key)) return problem(key, `unknown key ${key}`);
  }
  for (const key of REQUIRED) if (!(key in doc)) return problem(undefined, `missing required key ${key}`);
  const str = (key: string): string | undefined =>
    typeof doc[key] === "string" ? (doc[key] as string) : undefined;

  const name = str("name");
  if (name === undefined || !NAME.test(name))
    return problem("name", "name must match ^[a-z][a-z0-9-]{0,62}$");
  const base = basename(file);
  if (base !== name) return problem("name", `name ${name} differs from the file's basename ${base}`);
  const description = str("description");
  if (description === undefined || /[\r\n]/.test(description) || [...description].length > 200) {
    return problem("description", "description must be one line of at most 200 characters");
  }
  const on = str("on");
  if (on === undefined || !isEventKind(on))
    return problem("on", `on must be one of ${EVENT_KINDS.join(", ")}`);
  const when = str("when");
  if (when === undefined || when.trim() === "") return problem("when", "when must be a CEL expression");
  const level = str("level");
  if (level === undefined || !isLevel(level)) {
    return problem("level", "level must be annotate, notify, hold or stop");
  }
  let cooldown = DEFAULT_COOLDOWN;
  if ("cooldown" in doc) {
    const text = str("cooldown");
    const ms = text === undefined ? undefined : parseDuration(text);
    if (ms === undefined || ms < MINUTE || ms > 7 * DAY)
      return problem("cooldown", "cooldown must be a duration from 1m to 7d");
    cooldown = ms;
  }
  const target = str("target");
  if (target === undefined || !(TARGETS as readonly string[]).includes(target)) {
    return problem("target", "target must be run, harness, node or fleet");
  }
  if (target === "node" && level !== "annotate" && level !== "notify") {
    return problem("target", "target node is allowed only with level annotate or notify");
  }
  if (target === "fleet" && level !== "notify")
    return problem("target", "target fleet is allowed only with level notify");
  const message = str("message");
  if (message === undefined || [...message].length > 280)
    return problem("message", "message must be at most 280 characters");
  for (const [, inner] of message.matchAll(PLACEHOLDER)) {
    if (!(PLACEHOLDERS as readonly string[]).includes(inner ?? "")) {
      return problem(
        "message",
        `unknown placeholder {{${inner}}}: messages may use only ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(" ")}`,
      );
    }
  }
  return {
    ok: true,
    spec: {
      file,
      name,
      description,
      on,
      when,
      level: level as Level,
      cooldown,
      target: target as Target,
      message,
      whenSource: sourceOf(text, "when", when),
    },
  };
}

/** The canonical cooldown spelling, as the content hash encodes it. */
export const canonicalCooldown = (spec: RuleSpec): string => formatDuration(spec.cooldown);

function basename(file: string): string {
  const last = file.split(/[\\/]/).pop() ?? file;
  return last.replace(/\.toml$/, "");
}

/**
 * Where a top-level key is first written: `key = …`, a dotted `key.sub = …`, or a table header
 * `[key]` / `[key.sub]`, bare or quoted. A line-wise scan: a key it cannot find has no position.
 */
function keyPosition(text: string, key: string): { line?: number; column?: number } {
  const lines = text.split(/\r\n|\r|\n/);
  const k = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const spelled = `(?:${k}|"${k}"|'${k}')`;
  const re = new RegExp(`^([ \\t]*)(?:${spelled}[ \\t]*[.=]|\\[{1,2}[ \\t]*${spelled}[ \\t]*[.\\]])`);
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i] ?? "");
    if (m) return { line: i + 1, column: (m[1]?.length ?? 0) + 1 };
  }
  return {};
}

/** Where a key's string value is written, when the scan finds exactly the value smol-toml parsed. */
function sourceOf(text: string, key: string, value: string): StringValueSource | undefined {
  const source = findStringValue(text, key);
  return source !== undefined && decodeStringValue(source) === value ? source : undefined;
}
