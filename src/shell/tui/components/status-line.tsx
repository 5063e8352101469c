/**
 * The status line: whether the daemon answers (in words, never only a colour), the journal's lag, rows
 * dropped since the daemon started, rule counts by state, holds, read-only when `c` cannot clear, and
 * which daemon it watches (a socket path or a remote URL).
 */
import { Text } from "ink";
import type { ConsoleSnapshot } from "../console-data.js";

export function statusText(s: ConsoleSnapshot): string {
  const c = s.connection;
  const daemon =
    c.state === "connected"
      ? "connected"
      : c.state === "connecting"
        ? "connecting"
        : `DISCONNECTED, retrying in ${Math.max(0, Math.ceil((c.retryAtMs - s.nowMs) / 1000))}s (attempt ${c.attempt})`;
  const st = s.status;
  const facts =
    st === undefined
      ? []
      : [
          `lag ${st.lagSeconds.toFixed(1)}s`,
          `dropped ${st.droppedSinceStart.reduce((n, d) => n + Number(d.rows), 0)}`,
          `rules ${st.rulesActive} active ${st.rulesShadow} shadow ${st.disabled.length} disabled`,
          `holds ${st.holdsActive}`,
        ];
  return [
    ...(s.readOnly === undefined ? [] : ["READ-ONLY"]),
    daemon,
    ...facts,
    // Data from the operator's own flag or config, still shown printable: a URL may hold anything.
    ...(s.daemon === undefined ? [] : [`daemon ${s.daemon.replace(/[^\x20-\x7e]/g, "?")}`]),
  ].join(" | ");
}

export function StatusLine({
  snapshot,
  color,
}: {
  readonly snapshot: ConsoleSnapshot;
  readonly color: boolean;
}) {
  const down = snapshot.connection.state === "retrying";
  return (
    <Text wrap="truncate" inverse {...(color && down ? { color: "red" } : {})}>
      {statusText(snapshot)}
    </Text>
  );
}
