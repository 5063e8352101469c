/**
 * Cost units, shared by the static estimator (`estimate.ts`) and the runtime meter (the compiled
 * closures), in cel-go's units: SPEC-0029's per-evaluation limit of 5,000 is stated in them. A change
 * here changes both sides at once; the pinned-cost tests make every change deliberate.
 * See docs/cel-cost-model.md for the reference model and where ours differs from it.
 */
export const COST = {
  /** Reading a variable, or one select or index step. */
  selectAndIdent: 1,
  /** A literal. */
  constant: 0,
  /** A call with no size-dependent rule. */
  call: 1,
  /** `has(e.f)`, beyond the cost of `e`. */
  presenceTest: 1,
  listCreateBase: 10,
  mapCreateBase: 30,
  structCreateBase: 40,
  /** Per code point (or byte, or element) of one traversal. */
  stringTraversalFactor: 0.1,
  /** Per code point of a regular expression ("each term is about four characters"). */
  regexLengthFactor: 0.25,
} as const;

/** `ceil(n * factor)` in IEEE doubles, as the reference computes it, never negative. */
export function scaled(n: number, factor: number): number {
  return Math.max(0, Math.ceil(n * factor));
}
