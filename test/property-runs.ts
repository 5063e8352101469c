/**
 * How many cases each property test runs. `npm test` uses the base counts; `npm run soak` multiplies
 * them (PROPERTY_RUNS_FACTOR) and fixes the seed it prints (FC_SEED), so a soak failure can be replayed.
 */
import fc from "fast-check";

const factor = Number(process.env.PROPERTY_RUNS_FACTOR ?? "1");
const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
if (seed !== undefined) fc.configureGlobal({ seed });

export function runs(base: number): number {
  return Math.max(1, Math.round(base * (Number.isFinite(factor) && factor > 0 ? factor : 1)));
}

/** A test's timeout for a property whose cases each cost real work (a process, say): scaled like its runs. */
export function runsTimeout(baseMs: number): number {
  return runs(baseMs);
}
