/**
 * A journal row as the core sees it (SPEC-0029 REQ-7): its seq, the admission clock `at`, its kind,
 * and the REQ-4 fields of its event. Rows are plain data; the core never reads the store.
 */
import type { EventKind } from "./kinds.js";
import { INDEXED_FIELDS, type IndexedField, type IndexedRow } from "./window.js";

export interface EventFields {
  readonly type: string;
  /** The source's own time, ms since the epoch (the row's `at` is the admission time). */
  readonly at?: number;
  readonly [field: string]: unknown;
}

export interface JournalRow {
  readonly seq: number;
  /** Admission time, ms since the epoch; non-decreasing in seq order. */
  readonly at: number;
  readonly kind: EventKind;
  readonly event: EventFields;
}

/** The indexed fields an event carries itself (`kind` is the row's, `path` comes from `paths`). */
const INDEXED_EVENT_FIELDS = INDEXED_FIELDS.filter(
  (f): f is Exclude<IndexedField, "kind" | "path"> => f !== "kind" && f !== "path",
);

/** The row's indexed columns, as the journal table stores them: `path` from `paths` or `path`. */
export function indexRow(row: JournalRow): IndexedRow {
  const fields: Partial<Record<(typeof INDEXED_EVENT_FIELDS)[number], string | boolean>> = {};
  for (const f of INDEXED_EVENT_FIELDS) {
    const v = row.event[f];
    if (typeof v === "string" || typeof v === "boolean") fields[f] = v;
  }
  return { seq: row.seq, at: row.at, kind: row.kind, fields, paths: eventPaths(row.event) };
}

const NO_PATHS: readonly string[] = Object.freeze([]);

/** The paths the `path` key matches: a run event's `paths`, or a graph event's one `path`. */
export function eventPaths(event: EventFields): readonly string[] {
  const { paths, path } = event;
  if (Array.isArray(paths)) {
    // Admission keeps only strings in `paths`; a row built by hand may not, and is read as the journal would.
    return paths.every((p) => typeof p === "string")
      ? (paths as string[])
      : paths.filter((p): p is string => typeof p === "string");
  }
  return typeof path === "string" && path !== "" ? [path] : NO_PATHS;
}
