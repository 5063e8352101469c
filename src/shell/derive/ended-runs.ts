/**
 * The runs a deriver has seen end, the latest `ENDED_KEPT` of them: a late row of an ended run (a
 * PostToolUse admitted after its SessionEnd or its stop) must not start its state over, which nothing
 * would end again. Bounded, so a long-running daemon does not keep every run it ever saw.
 */
const ENDED_KEPT = 4_096;

export class EndedRuns {
  private runs = new Set<string>();

  add(run: string): void {
    this.runs.delete(run);
    this.runs.add(run);
    if (this.runs.size > ENDED_KEPT) this.runs.delete(this.runs.values().next().value as string);
  }

  has(run: string): boolean {
    return this.runs.has(run);
  }

  clear(): void {
    this.runs = new Set();
  }
}
