/**
 * A journal time written as text: RFC 3339 in UTC, to the second (`2026-11-01T08:30:00Z`), as messages,
 * notify payloads, the CLI and proposal answers all show it.
 */
export const rfc3339Seconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
