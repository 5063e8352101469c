/**
 * Failpoints for the crash matrix: `HARNESS_FAILPOINTS=eval.afterCommit` (or `name@N`, the Nth time the
 * point is reached) kills this process with SIGKILL there, as a power cut would. Read once at start;
 * unset, `failpoint` is a function that does nothing, so production pays one call per point.
 */
const spec = process.env.HARNESS_FAILPOINTS;

export type FailpointName =
  | "admit.beforeCommit"
  | "admit.afterCommit"
  | "eval.beforeCommit"
  | "eval.afterCommit"
  | "action.beforeStart"
  | "action.afterStart"
  | "action.afterRun"
  | "derive.beforeCommit"
  | "derive.afterCommit"
  | "tell.beforeCommit"
  | "tell.afterCommit"
  | "backtest.running";

function armed(text: string): (name: FailpointName) => void {
  const points = new Map<string, number>();
  for (const part of text.split(",")) {
    const [name, nth] = part.trim().split("@");
    if (name) points.set(name, nth === undefined ? 1 : Math.max(1, Number.parseInt(nth, 10) || 1));
  }
  const hits = new Map<string, number>();
  return (name) => {
    const at = points.get(name);
    if (at === undefined) return;
    const n = (hits.get(name) ?? 0) + 1;
    hits.set(name, n);
    if (n >= at) process.kill(process.pid, "SIGKILL");
  };
}

export const failpoint: (name: FailpointName) => void =
  spec === undefined || spec === "" ? () => {} : armed(spec);
