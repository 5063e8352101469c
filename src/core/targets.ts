/**
 * What a fire applies to (SPEC-0029 REQ-3): the event's run, its harness, the graph node it is about,
 * or the fleet; and the key its cooldown is kept under. Node ids are the fleet graph's `<kind>:<key>`,
 * each key component percent-encoded on its own for `%`, `#`, `@`, `:`, whitespace and non-printable
 * bytes, the separators between components left as they are.
 */

import type { EventFields } from "./journal.js";
import type { EventKind } from "./kinds.js";
import type { Target } from "./rule-file.js";

export interface ResolvedTarget {
  readonly kind: Target;
  /** The cooldown key: a run id, a harness name, a node id, or `fleet`. */
  readonly key: string;
  /** The harness the target belongs to, when the event names one. */
  readonly harness: string | undefined;
  readonly run: string | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Percent-encodes one component of a node key. */
export function encodeComponent(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === "%" || ch === "#" || ch === "@" || ch === ":" || /\s/u.test(ch) || cp < 0x20 || cp === 0x7f) {
      for (const b of new TextEncoder().encode(ch))
        out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    } else out += ch;
  }
  return out;
}

/** `run:<harness>/<id>` from a run named `<harness>#<id>`: the harness and the id are separate components. */
export function runNode(run: string): string {
  const hash = run.lastIndexOf("#");
  if (hash < 0) return `run:${encodeComponent(run)}`;
  return `run:${encodeComponent(run.slice(0, hash))}#${encodeComponent(run.slice(hash + 1))}`;
}

export function fileNode(repo: string, path: string): string {
  return `file:${encodeComponent(repo)}:${path.split("/").map(encodeComponent).join("/")}`;
}

/** The target, or undefined when the event lacks the field the target needs (the fire is `no_target`). */
export function resolveTarget(
  target: Target,
  kind: EventKind,
  event: EventFields,
): ResolvedTarget | undefined {
  const harness = str(event.harness);
  const run = str(event.run);
  switch (target) {
    case "run":
      return run === undefined ? undefined : { kind: target, key: run, harness, run };
    case "harness":
      return harness === undefined ? undefined : { kind: target, key: harness, harness, run };
    case "fleet":
      return { kind: target, key: "fleet", harness, run };
    case "node": {
      const repo = str(event.repo);
      const path = str(event.path);
      if (kind === "graph_event" && repo !== undefined && path !== undefined) {
        return { kind: target, key: fileNode(repo, path), harness, run };
      }
      const subject = str(event.subject);
      if (kind === "fact_event" && subject !== undefined) return { kind: target, key: subject, harness, run };
      return run === undefined ? undefined : { kind: target, key: runNode(run), harness, run };
    }
  }
}

/**
 * The graph node an annotation of this target is stored by (REQ-10): a node target's own id, the
 * run's node, or the harness's; a fleet target has no node and is not annotated.
 */
export function annotationNode(target: ResolvedTarget): string | undefined {
  switch (target.kind) {
    case "node":
      return target.key;
    case "run":
      return runNode(target.key);
    case "harness":
      return `harness:${encodeComponent(target.key)}`;
    case "fleet":
      return undefined;
  }
}
