/**
 * Rule-file durations (`cooldown`): Go-style sequences such as `90s`, `30m`, `1h30m`, plus `d` for
 * days, held as whole milliseconds, with one canonical spelling so that `60m` and `1h` hash alike.
 */
export type Millis = number;

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): Millis | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART))
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  return Number.isFinite(total) && Number.isInteger(total) ? total : undefined;
}

/** The canonical spelling: largest units first, no zero parts (`1h30m`, `7d`, `90s` → `1m30s`). */
export function formatDuration(ms: Millis): string {
  if (ms === 0) return "0s";
  let rest = ms;
  let out = "";
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
    ["ms", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}

export const MINUTE: Millis = 60_000;
export const HOUR: Millis = 3_600_000;
export const DAY: Millis = 86_400_000;
