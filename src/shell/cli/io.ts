/**
 * What every command is handed and what it hands back: the streams (`Io`, passed in, never reached
 * for), the options every client command shares, the exit codes (docs/cli.md), and the text forms a
 * terminal shows: times, tables.
 */
import { rfc3339Seconds } from "../../core/instants.js";
import { printable } from "./render/printable.js";

/** The streams a command writes to, and the environment it reads; `main.ts` passes the process's. */
export interface Io {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface Common {
  readonly socket?: string | undefined;
  /** `--daemon https://host:port` and its TLS files (`target.ts`). */
  readonly daemon?: string | undefined;
  readonly caFile?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
}

/** Exit codes shared by the client commands (docs/cli.md). */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, error: 4 } as const;

/** An RFC 3339 time, second precision; null for the protocol's "not set" (0). */
export const iso = (ms: bigint): string | null => (ms === 0n ? null : rfc3339Seconds(Number(ms)));

export const isoOr = (ms: bigint, none: string): string => iso(ms) ?? none;

/** Columns padded to their widest cell, two spaces apart; every cell made printable (a table is text). */
export function table(header: readonly string[], cells: readonly (readonly string[])[]): string[] {
  const rows = cells.map((r) => r.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
