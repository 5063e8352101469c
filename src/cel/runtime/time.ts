/**
 * Timestamps and durations as CEL's standard library defines them, following cel-go, the reference
 * implementation, wherever the spec leaves a choice.
 *
 * Everything is exact integer arithmetic on bigint nanoseconds. Calendar fields are computed here, in the
 * proleptic Gregorian calendar Go uses, from whole seconds plus a UTC offset; `Intl` is asked only for the
 * offset of an IANA time zone at an instant. Every result is range-checked: a timestamp lies within
 * 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999999Z, a duration within int64 nanoseconds.
 */
import {
  CelError,
  Duration,
  INT64_MAX,
  INT64_MIN,
  NANOS_PER_SECOND,
  TIMESTAMP_MAX,
  TIMESTAMP_MIN,
  Timestamp,
} from "./values.js";

export type TimestampField =
  | "getFullYear"
  | "getMonth"
  | "getDayOfYear"
  | "getDayOfMonth"
  | "getDate"
  | "getDayOfWeek"
  | "getHours"
  | "getMinutes"
  | "getSeconds"
  | "getMilliseconds";

export type DurationField = "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds";

const NANOS_PER_MILLISECOND = 1_000_000n;
const NANOS_PER_MINUTE = 60n * NANOS_PER_SECOND;
const NANOS_PER_HOUR = 60n * NANOS_PER_MINUTE;
const SECONDS_PER_DAY = 86_400;
/** The magnitude of INT64_MIN: the largest a negative duration's digits may add up to. */
const INT64_MIN_MAGNITUDE = -INT64_MIN;

// ---------------------------------------------------------------------------------------------------------
// Range checks

export function checkedTimestamp(nanos: bigint): Timestamp | CelError {
  return nanos < TIMESTAMP_MIN || nanos > TIMESTAMP_MAX
    ? new CelError("timestamp overflow")
    : new Timestamp(nanos);
}

function checkedDuration(nanos: bigint): Duration | CelError {
  return nanos < INT64_MIN || nanos > INT64_MAX ? new CelError("duration overflow") : new Duration(nanos);
}

/** Division rounding toward negative infinity (bigint `/` truncates toward zero); `divisor` is positive. */
function floorDiv(dividend: bigint, divisor: bigint): bigint {
  const quotient = dividend / divisor;
  return dividend % divisor < 0n ? quotient - 1n : quotient;
}

// ---------------------------------------------------------------------------------------------------------
// The proleptic Gregorian calendar, on day numbers counted from 1970-01-01. The algorithms work in 400-year
// eras of 146,097 days whose years start on March 1, so that the leap day falls at the end of a year.

interface CivilDate {
  readonly year: number;
  /** 1..12 */
  readonly month: number;
  /** 1..31 */
  readonly day: number;
}

const DAYS_PER_ERA = 146_097;
/** Days from 0000-03-01, the start of era 0, to 1970-01-01. */
const EPOCH_FROM_ERA_START = 719_468;

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function daysFromCivil({ year, month, day }: CivilDate): number {
  const marchYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(marchYear / 400);
  const yearOfEra = marchYear - era * 400;
  const monthFromMarch = month > 2 ? month - 3 : month + 9;
  const dayOfMarchYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfMarchYear;
  return era * DAYS_PER_ERA + dayOfEra - EPOCH_FROM_ERA_START;
}

function civilFromDays(days: number): CivilDate {
  const shifted = days + EPOCH_FROM_ERA_START;
  const era = Math.floor(shifted / DAYS_PER_ERA);
  const dayOfEra = shifted - era * DAYS_PER_ERA;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfMarchYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfMarchYear + 2) / 153);
  const day = dayOfMarchYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

/** The calendar fields of a wall-clock time, given as whole seconds since 1970-01-01T00:00:00. */
interface WallClock extends CivilDate {
  /** 1..366 */
  readonly dayOfYear: number;
  /** 0 = Sunday */
  readonly dayOfWeek: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

function wallClock(seconds: number): WallClock {
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const secondOfDay = seconds - days * SECONDS_PER_DAY;
  const date = civilFromDays(days);
  return {
    ...date,
    dayOfYear: days - daysFromCivil({ year: date.year, month: 1, day: 1 }) + 1,
    // 1970-01-01 was a Thursday.
    dayOfWeek: (((days + 4) % 7) + 7) % 7,
    hour: Math.floor(secondOfDay / 3600),
    minute: Math.floor((secondOfDay % 3600) / 60),
    second: secondOfDay % 60,
  };
}

/** `.123` for 123,000,000 nanoseconds: up to nine digits, trailing zeros trimmed, nothing for zero. */
function fractionDigits(nanos: bigint): string {
  return nanos === 0n ? "" : `.${nanos.toString().padStart(9, "0").replace(/0+$/, "")}`;
}

const pad = (n: number, width: number): string => n.toString().padStart(width, "0");

// ---------------------------------------------------------------------------------------------------------
// Timestamps

/**
 * The shape cel-go accepts (since v0.30 it rejects what `time.Parse` alone lets through: a `,` before the
 * fraction, one-digit fields, offsets past 23:59). `T` and `Z` are upper case only, as Go's parser wants.
 */
const RFC3339_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function invalidTimestamp(s: string, reason?: string): CelError {
  return new CelError(
    `invalid RFC 3339 timestamp ${JSON.stringify(s)}${reason === undefined ? "" : `: ${reason}`}`,
  );
}

/** `timestamp(string)`: an RFC 3339 date-time with `Z` or a numeric offset, fractional seconds optional. */
export function parseTimestamp(s: string): Timestamp | CelError {
  if (!RFC3339_SHAPE.test(s)) return invalidTimestamp(s);
  const digits = (from: number, to: number): number => Number(s.slice(from, to));
  const date = { year: digits(0, 4), month: digits(5, 7), day: digits(8, 10) };
  const hour = digits(11, 13);
  const minute = digits(14, 16);
  const second = digits(17, 19);
  const utc = s.endsWith("Z");
  const zoneStart = utc ? s.length - 1 : s.length - 6;
  const offsetHour = utc ? 0 : digits(zoneStart + 1, zoneStart + 3);
  const offsetMinute = utc ? 0 : digits(zoneStart + 4, zoneStart + 6);
  const outOfGrammar =
    date.month < 1 || date.month > 12 || date.day < 1 || date.day > 31 || hour > 23 || minute > 59;
  if (outOfGrammar || offsetHour > 23 || offsetMinute > 59) return invalidTimestamp(s);
  if (date.day > daysInMonth(date.year, date.month)) return invalidTimestamp(s, "day out of range");
  // RFC 3339 allows a leap second; Go, and so cel-go, rejects it.
  if (second > 59) return invalidTimestamp(s, "second out of range");
  const offsetSeconds = (s[zoneStart] === "-" ? -1 : 1) * (offsetHour * 3600 + offsetMinute * 60);
  const seconds = daysFromCivil(date) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offsetSeconds;
  // Go reads any number of fraction digits and keeps the first nine.
  const fraction = BigInt(s.slice(20, zoneStart).slice(0, 9).padEnd(9, "0"));
  return checkedTimestamp(BigInt(seconds) * NANOS_PER_SECOND + fraction);
}

/** `string(timestamp)`: RFC 3339 in UTC with the fraction's trailing zeros trimmed (Go's RFC3339Nano). */
export function formatTimestamp(t: Timestamp): string {
  const seconds = floorDiv(t.nanos, NANOS_PER_SECOND);
  const w = wallClock(Number(seconds));
  const date = `${pad(w.year, 4)}-${pad(w.month, 2)}-${pad(w.day, 2)}`;
  const time = `${pad(w.hour, 2)}:${pad(w.minute, 2)}:${pad(w.second, 2)}`;
  return `${date}T${time}${fractionDigits(t.nanos - seconds * NANOS_PER_SECOND)}Z`;
}

/** `timestamp(int)`: seconds since the Unix epoch. */
export function timestampFromSeconds(seconds: bigint): Timestamp | CelError {
  return checkedTimestamp(seconds * NANOS_PER_SECOND);
}

/** `int(timestamp)`: whole seconds since the epoch, rounded down (Go's `Unix()`), so -0.5s gives -1. */
export function timestampSeconds(t: Timestamp): bigint {
  return floorDiv(t.nanos, NANOS_PER_SECOND);
}

// ---------------------------------------------------------------------------------------------------------
// Durations

/** Go's units, with both spellings of micro: U+00B5 (micro sign) and U+03BC (Greek mu). */
const DURATION_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["\u00b5s", 1_000n],
  ["\u03bcs", 1_000n],
  ["ms", NANOS_PER_MILLISECOND],
  ["s", NANOS_PER_SECOND],
  ["m", NANOS_PER_MINUTE],
  ["h", NANOS_PER_HOUR],
]);

/** One `1.5h` of `1.5h30m`: digits, an optional fraction, and the unit (whatever runs up to a digit or `.`). */
const DURATION_TERM = /(\d*)(?:\.(\d*))?([^\d.]*)/y;

/**
 * `duration(string)`: Go's `time.ParseDuration`, e.g. "1h30m", "-1.5s", "100ms", "0". A term's fraction is
 * truncated to whole nanoseconds exactly (Go computes it in floating point, which can differ by a
 * nanosecond only when the input has digits below the nanosecond).
 */
export function parseDuration(s: string): Duration | CelError {
  const negative = s.startsWith("-");
  const body = negative || s.startsWith("+") ? s.slice(1) : s;
  if (body === "0") return new Duration(0n);
  if (body === "") return new CelError(`invalid duration ${JSON.stringify(s)}`);
  let magnitude = 0n;
  DURATION_TERM.lastIndex = 0;
  while (DURATION_TERM.lastIndex < body.length) {
    // The pattern matches the empty string too, so it always matches; only the fraction is optional.
    const [, whole = "", fraction = "", unitName = ""] = DURATION_TERM.exec(body) ?? [];
    if (whole === "" && fraction === "") return new CelError(`invalid duration ${JSON.stringify(s)}`);
    if (unitName === "") return new CelError(`missing unit in duration ${JSON.stringify(s)}`);
    const unit = DURATION_UNITS.get(unitName);
    if (unit === undefined) {
      const unknown = `unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(s)}`;
      return new CelError(unitName === "d" ? `${unknown}: ${noDayUnit(s)}` : unknown);
    }
    magnitude += BigInt(whole || "0") * unit;
    if (fraction !== "") magnitude += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
    // Terms only add up; stopping early keeps a long input from growing huge numbers.
    if (magnitude > INT64_MIN_MAGNITUDE) break;
  }
  const nanos = negative ? -magnitude : magnitude;
  return nanos < INT64_MIN || nanos > INT64_MAX
    ? new CelError(`duration overflow: ${JSON.stringify(s)}`)
    : new Duration(nanos);
}

/**
 * Go's and cel-go's durations stop at hours, and a day is the unit people reach for: the error says so,
 * with the hours to write when the text is a whole number of days.
 */
function noDayUnit(s: string): string {
  const days = /^(\d{1,6})d$/.exec(s)?.[1];
  const instead =
    days === undefined ? 'days as hours (duration("24h") a day)' : `duration("${Number(days) * 24}h")`;
  return `CEL durations have no "d" unit, so write ${instead}`;
}

/**
 * `string(duration)`: seconds with up to nine fraction digits, trailing zeros trimmed, and `s`: "1.5s",
 * "-0.000000001s", "0s". cel-go formats the seconds as a float64; this is the exact decimal, which is what
 * cel-go prints whenever the float holds it (up to 15 significant digits).
 */
export function formatDuration(d: Duration): string {
  const magnitude = d.nanos < 0n ? -d.nanos : d.nanos;
  const sign = d.nanos < 0n ? "-" : "";
  return `${sign}${magnitude / NANOS_PER_SECOND}${fractionDigits(magnitude % NANOS_PER_SECOND)}s`;
}

// ---------------------------------------------------------------------------------------------------------
// Arithmetic. Exact on bigints, so only the result needs a range check (cel-go splits the values into
// seconds and nanoseconds to the same end).

export function addTimestampDuration(t: Timestamp, d: Duration): Timestamp | CelError {
  return checkedTimestamp(t.nanos + d.nanos);
}

export function subtractTimestampDuration(t: Timestamp, d: Duration): Timestamp | CelError {
  return checkedTimestamp(t.nanos - d.nanos);
}

export function subtractTimestamps(a: Timestamp, b: Timestamp): Duration | CelError {
  return checkedDuration(a.nanos - b.nanos);
}

export function addDurations(a: Duration, b: Duration): Duration | CelError {
  return checkedDuration(a.nanos + b.nanos);
}

export function subtractDurations(a: Duration, b: Duration): Duration | CelError {
  return checkedDuration(a.nanos - b.nanos);
}

// ---------------------------------------------------------------------------------------------------------
// Accessors

/**
 * A calendar field of `t` in `zone` (UTC when absent). Following cel-go, months, days of the month and days
 * of the year count from 0, `getDate` from 1, and `getDayOfWeek` gives 0 for Sunday.
 */
export function timestampAccessor(t: Timestamp, field: TimestampField, zone = "UTC"): bigint | CelError {
  const seconds = floorDiv(t.nanos, NANOS_PER_SECOND);
  const offset = utcOffsetSeconds(zone, seconds);
  if (offset instanceof CelError) return offset;
  if (field === "getMilliseconds") return (t.nanos - seconds * NANOS_PER_SECOND) / NANOS_PER_MILLISECOND;
  return BigInt(calendarField(wallClock(Number(seconds) + offset), field));
}

function calendarField(w: WallClock, field: Exclude<TimestampField, "getMilliseconds">): number {
  switch (field) {
    case "getFullYear":
      return w.year;
    case "getMonth":
      return w.month - 1;
    case "getDayOfYear":
      return w.dayOfYear - 1;
    case "getDayOfMonth":
      return w.day - 1;
    case "getDate":
      return w.day;
    case "getDayOfWeek":
      return w.dayOfWeek;
    case "getHours":
      return w.hour;
    case "getMinutes":
      return w.minute;
    case "getSeconds":
      return w.second;
  }
}

/**
 * Hours, minutes and seconds are the whole duration in that unit, truncated toward zero, as in cel-go
 * (which goes through a float64 and so can round up within a microsecond of the next whole unit; this
 * does not). Milliseconds are the millisecond component, -999..999, as the conformance suite and cel-cpp
 * have it; cel-go returns the total milliseconds and skips that conformance case.
 */
export function durationAccessor(d: Duration, field: DurationField): bigint {
  switch (field) {
    case "getHours":
      return d.nanos / NANOS_PER_HOUR;
    case "getMinutes":
      return d.nanos / NANOS_PER_MINUTE;
    case "getSeconds":
      return d.nanos / NANOS_PER_SECOND;
    case "getMilliseconds":
      return (d.nanos % NANOS_PER_SECOND) / NANOS_PER_MILLISECOND;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Time zones. As in cel-go, a zone with a `:` is a fixed offset, anything else a zone name.

/** The offset of `zone` from UTC, in seconds, at the instant `seconds` after the epoch. */
function utcOffsetSeconds(zone: string, seconds: bigint): number | CelError {
  return zone.includes(":") ? fixedOffsetSeconds(zone) : zoneOffsetSeconds(zone, seconds);
}

/** Go's `strconv.Atoi` syntax: an optional sign and decimal digits. */
const GO_INT = /^[+-]?\d+$/;

/**
 * `[+-]HH:MM` read the way cel-go reads it: each side of the colon as a Go integer, so "02:00" (no sign)
 * is accepted and "-02:30" is minus two and a half hours.
 */
function fixedOffsetSeconds(zone: string): number | CelError {
  const colon = zone.indexOf(":");
  const hoursText = zone.slice(0, colon);
  const minutesText = zone.slice(colon + 1);
  if (!GO_INT.test(hoursText) || !GO_INT.test(minutesText)) {
    return new CelError(`invalid time zone offset ${JSON.stringify(zone)}`);
  }
  const hours = Number(hoursText);
  const minutes = Number(minutesText);
  if (hours < -23 || hours > 23) return new CelError(`timezone offset hours out of range [-23, 23]: ${zone}`);
  if (minutes < 0 || minutes > 59) {
    return new CelError(`timezone offset minutes out of range [0, 59]: ${zone}`);
  }
  // The sign is the text's, so that "-00:30" is negative too.
  const offsetMinutes = zone.startsWith("-") ? hours * 60 - minutes : hours * 60 + minutes;
  return offsetMinutes * 60;
}

/**
 * One formatter per zone, read only for its offset ("GMT-04:56:02", "GMT+05:45", "GMT"). Keyed by the
 * lower-cased name because `Intl` treats zone names without regard to case, which also bounds the cache by
 * the number of real zones.
 */
const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

function zoneFormatter(zone: string): Intl.DateTimeFormat | undefined {
  const key = zone.toLowerCase();
  const cached = zoneFormatters.get(key);
  if (cached !== undefined) return cached;
  try {
    const formatter = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
    zoneFormatters.set(key, formatter);
    return formatter;
  } catch {
    // Intl throws a RangeError for a name it does not know.
    return undefined;
  }
}

const GMT_OFFSET = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** The offset of an IANA zone (or "UTC"; "" is UTC too, as for Go's `time.LoadLocation`). */
function zoneOffsetSeconds(zone: string, seconds: bigint): number | CelError {
  if (zone === "" || zone === "UTC") return 0;
  // A name that is an offset without a colon is no zone to Go; newer Intl versions would take it as one.
  const formatter = /^[+-]/.test(zone) ? undefined : zoneFormatter(zone);
  if (formatter === undefined) return new CelError(`unknown time zone ${zone}`);
  // Offsets change on whole seconds, so the whole-second instant (well within Date's range) is enough.
  const name = formatter
    .formatToParts(new Date(Number(seconds) * 1000))
    .find((p) => p.type === "timeZoneName");
  const match = GMT_OFFSET.exec(name?.value ?? "");
  if (match === null) return new CelError(`cannot read the UTC offset of time zone ${zone}`);
  const [, sign, hours = "0", minutes = "0", secs = "0"] = match;
  const magnitude = Number(hours) * 3600 + Number(minutes) * 60 + Number(secs);
  return sign === "-" ? -magnitude : magnitude;
}
