/**
 * A small timing harness for a noisy 2-core machine: warm up, then take many samples of a batch of
 * calls and report the median time per call, so one descheduled sample does not move the result.
 */
export interface Measurement {
  readonly medianNs: number;
  readonly p10Ns: number;
  readonly p90Ns: number;
}

export function measure(fn: () => unknown, { batch = 500, samples = 31, warmup = 3000 } = {}): Measurement {
  for (let i = 0; i < warmup; i++) fn();
  const perCall: number[] = [];
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    perCall.push(Number(process.hrtime.bigint() - start) / batch);
  }
  perCall.sort((a, b) => a - b);
  const at = (q: number) => perCall[Math.min(perCall.length - 1, Math.floor(q * perCall.length))] as number;
  return { medianNs: at(0.5), p10Ns: at(0.1), p90Ns: at(0.9) };
}

/**
 * Several functions measured side by side: their batches alternate within each sample, so a GC pause
 * or a busy neighbour lands on all of them alike rather than on whichever ran during it.
 */
export function measureSideBySide(
  fns: readonly (() => unknown)[],
  { batch = 500, samples = 31, warmup = 3000 } = {},
): Measurement[] {
  for (const fn of fns) for (let i = 0; i < warmup; i++) fn();
  const perCall: number[][] = fns.map(() => []);
  for (let s = 0; s < samples; s++) {
    fns.forEach((fn, k) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) fn();
      perCall[k]?.push(Number(process.hrtime.bigint() - start) / batch);
    });
  }
  return perCall.map((xs) => {
    xs.sort((a, b) => a - b);
    const at = (q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number;
    return { medianNs: at(0.5), p10Ns: at(0.1), p90Ns: at(0.9) };
  });
}

/** The `q` quantile of unsorted samples (nearest rank): p99 of 200 samples is the 2nd worst. */
export const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
};

/** The same shuffle on every run from `seed`: a small LCG, so an order can be repeated. */
export function shuffler(seed: number): <T>(xs: readonly T[]) => T[] {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return (xs) => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j] as (typeof out)[number], out[i] as (typeof out)[number]];
    }
    return out;
  };
}
