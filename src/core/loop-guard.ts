/**
 * The loop guard (SPEC-0029 REQ-12): it counts identical tool calls and consults no rule, so this module
 * imports no rule type. The loop guard is not a rule: rules see its trips only as `loop_stopped` rows.
 * The reference supervisor counts with it (stopping the harness when it trips) and so does the daemon's
 * loop guard for hook-fed runs (stopping the run).
 */

/** The loop guard's threshold: identical calls in an unbroken streak, unchanged by rules. */
export const LOOP_THRESHOLD = 8;

/**
 * The loop guard: per harness, the current streak of identical tool calls, keyed by tool and input
 * digest, never the tool alone (an agent commenting on ten issues is working, not looping).
 */
export class LoopGuard {
  private readonly streaks = new Map<string, { session: string; key: string; count: number }>();

  constructor(private readonly threshold = LOOP_THRESHOLD) {}

  private streak(harness: string, session: string) {
    let s = this.streaks.get(harness);
    if (s === undefined || s.session !== session) {
      s = { session, key: "", count: 0 };
      this.streaks.set(harness, s);
    }
    return s;
  }

  /** Counts one tool call; the streak's length when it reaches the threshold (and starts over), else undefined. */
  tool(harness: string, session: string, tool: string, digest: string): number | undefined {
    const s = this.streak(harness, session);
    if (digest === "") {
      // Nothing to compare: treated as a different call, so a missing digest can never build a streak.
      s.key = "";
      s.count = 0;
      return undefined;
    }
    const key = `${tool}\u0000${digest}`;
    if (key !== s.key) {
      s.key = key;
      s.count = 0;
    }
    s.count++;
    if (s.count < this.threshold) return undefined;
    const count = s.count;
    s.key = "";
    s.count = 0;
    return count;
  }

  /** A user message is new work: the streak starts over. */
  mark(harness: string, session: string, mark: string): void {
    if (mark !== "user-message") return;
    const s = this.streak(harness, session);
    s.key = "";
    s.count = 0;
  }
}
