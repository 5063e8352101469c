/**
 * The admission check of a row's event (SPEC-0029 REQ-7): only its kind's REQ-4 fields, each of its
 * declared type and within the bounds of `kinds.ts`, so no summary, output line or fact value enters
 * the journal and no admitted row can push a rule past its cost estimate. Nothing is truncated: a row
 * that breaks a rule is refused, naming the field.
 */
import { codePointLength } from "../cel/index.js";
import { EVENT_FIELDS, type EventKind } from "./kinds.js";

/**
 * Why an event was refused, from a closed set: the `reason` label of
 * `harness_rule_journal_rejected_total` (REQ-20: a label never carries a message or producer text).
 */
export const REFUSAL_REASONS = [
  "unknown_kind",
  "unknown_field",
  "missing_field",
  "bad_type",
  "too_long",
  "too_many",
  "bad_path",
  "control_character",
  "not_unicode",
  "source_not_allowed",
  "too_large",
  "store_error",
  "run_closed",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export interface AdmissionProblem {
  readonly field: string;
  readonly reason: RefusalReason;
  readonly message: string;
}

const PATH_FIELDS = new Set(["paths", "path"]);

function pathProblem(p: string): string | undefined {
  if (p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p)) return "must be repo-relative, not absolute";
  if (p.split(/[\\/]/).includes("..")) return "must not contain '..'";
  return undefined;
}

/**
 * A JSON string may escape half of a surrogate pair (`"\ud800"`): valid JSON, but no Unicode text, so
 * it could not be stored, matched or shown faithfully. In a `u` regex a pair is one code point, so
 * only an unpaired half matches.
 */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether a JS string is Unicode text: no unpaired half of a surrogate pair (see above). */
export const isUnicodeText = (s: string): boolean => !LONE_SURROGATE.test(s);

export const NOT_UNICODE = "is not well-formed Unicode (it holds an unpaired surrogate)";

/**
 * C0 controls, DEL and C1 controls. No field (identifiers, enums, digests, paths) has a use for them,
 * and admitted they can drive an operator's terminal or break the notify hook's environment (a NUL).
 */
const CONTROL = /\p{Cc}/u; // Unicode's control category: exactly U+0000-U+001F and U+007F-U+009F

/** The first control character of `s` as `U+XXXX`, or undefined when it holds none. */
function controlCharacter(s: string): string | undefined {
  const m = CONTROL.exec(s);
  return m === null
    ? undefined
    : `U+${(m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why `s` is not text a field may hold (not Unicode, or a control character), or undefined. */
export function textProblem(s: string): { reason: RefusalReason; message: string } | undefined {
  if (!isUnicodeText(s)) return { reason: "not_unicode", message: NOT_UNICODE };
  const control = controlCharacter(s);
  return control === undefined
    ? undefined
    : { reason: "control_character", message: `holds a control character (${control})` };
}

/** The problems with `event` as a row of `kind`; none means it may be admitted. */
export function admissionProblems(
  kind: EventKind,
  event: Readonly<Record<string, unknown>>,
): AdmissionProblem[] {
  const fields = EVENT_FIELDS[kind];
  const problems: AdmissionProblem[] = [];
  for (const [name, value] of Object.entries(event)) {
    const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (spec === undefined) {
      problems.push({ field: name, reason: "unknown_field", message: `${name} is not a ${kind} field` });
      continue;
    }
    if (value === undefined || value === null) continue;
    const fail = (reason: RefusalReason, message: string) =>
      problems.push({ field: name, reason, message: `${name} ${message}` });
    switch (spec.type.kind) {
      case "string": {
        const text = typeof value === "string" ? textProblem(value) : undefined;
        if (typeof value !== "string") fail("bad_type", "must be a string");
        else if (text !== undefined) fail(text.reason, text.message);
        else if (spec.size !== undefined && codePointLength(value) > spec.size.max)
          fail("too_long", `is longer than ${spec.size.max} characters`);
        else if (PATH_FIELDS.has(name) && value !== "") {
          const p = pathProblem(value);
          if (p !== undefined) fail("bad_path", p);
        }
        break;
      }
      case "bool":
        if (typeof value !== "boolean") fail("bad_type", "must be a bool");
        break;
      case "int":
        if (!(typeof value === "bigint" || (typeof value === "number" && Number.isSafeInteger(value))))
          fail("bad_type", "must be an integer");
        break;
      case "timestamp":
        if (typeof value !== "number" || !Number.isFinite(value))
          fail("bad_type", "must be a time in ms since the epoch");
        break;
      case "list": {
        const max = spec.size?.max ?? Number.POSITIVE_INFINITY;
        const elemMax = spec.size?.elem?.max ?? Number.POSITIVE_INFINITY;
        if (!Array.isArray(value)) fail("bad_type", "must be a list of strings");
        else if (value.length > max) fail("too_many", `holds more than ${max} entries`);
        else {
          for (const x of value) {
            if (typeof x !== "string") {
              fail("bad_type", "must hold only strings");
              break;
            }
            const text = textProblem(x);
            if (text !== undefined) {
              fail(text.reason, `holds an entry that ${text.message}`);
              break;
            }
            if (codePointLength(x) > elemMax) {
              fail("too_long", `holds an entry longer than ${elemMax} characters`);
              break;
            }
            const p = PATH_FIELDS.has(name) ? pathProblem(x) : undefined;
            if (p !== undefined) {
              fail("bad_path", `entry ${JSON.stringify(x)} ${p}`);
              break;
            }
          }
        }
        break;
      }
      default:
        fail("bad_type", `has a type admission does not know (${spec.type.kind})`);
    }
  }
  if (typeof event.type !== "string" || event.type === "")
    problems.push({ field: "type", reason: "missing_field", message: "type is required" });
  return problems;
}
