import { getConformanceSuite, type IncrementalTest } from "@bufbuild/cel-spec/testdata/tests.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addDurations,
  addTimestampDuration,
  durationAccessor,
  formatDuration,
  formatTimestamp,
  parseDuration,
  parseTimestamp,
  subtractDurations,
  subtractTimestampDuration,
  subtractTimestamps,
  type TimestampField,
  timestampAccessor,
  timestampFromSeconds,
  timestampSeconds,
} from "../../src/cel/runtime/time.js";
import {
  CelError,
  Duration,
  INT64_MAX,
  INT64_MIN,
  NANOS_PER_SECOND,
  TIMESTAMP_MAX,
  TIMESTAMP_MIN,
  Timestamp,
  typeName,
} from "../../src/cel/runtime/values.js";
import { runs } from "../property-runs.js";

type Maybe<T> = T | CelError;

/** The value, or a test failure naming the error. */
function ok<T>(v: Maybe<T>): T {
  if (v instanceof CelError) throw new Error(`unexpected error: ${v.message}`);
  return v;
}

/** The error's message, or a test failure. */
function errorOf(v: unknown): string {
  if (!(v instanceof CelError)) throw new Error(`expected an error, got ${String(v)}`);
  return v.message;
}

const ts = (s: string): Timestamp => ok(parseTimestamp(s));
const dur = (s: string): Duration => ok(parseDuration(s));
const nanosOf = (s: string): bigint => dur(s).nanos;
const SECOND = NANOS_PER_SECOND;

// Calls as CEL makes them: an error argument is the result.
const lift1 =
  <A, R>(f: (a: A) => Maybe<R>) =>
  (a: Maybe<A>): Maybe<R> =>
    a instanceof CelError ? a : f(a);
const lift2 =
  <A, B, R>(f: (a: A, b: B) => Maybe<R>) =>
  (a: Maybe<A>, b: Maybe<B>): Maybe<R> =>
    a instanceof CelError ? a : b instanceof CelError ? b : f(a, b);

interface Instant {
  readonly nanos: bigint;
}
const eq = lift2((a: Instant, b: Instant) => a.nanos === b.nanos);
const ne = lift2((a: Instant, b: Instant) => a.nanos !== b.nanos);
const lt = lift2((a: Instant, b: Instant) => a.nanos < b.nanos);
const le = lift2((a: Instant, b: Instant) => a.nanos <= b.nanos);
const gt = lift2((a: Instant, b: Instant) => a.nanos > b.nanos);
const ge = lift2((a: Instant, b: Instant) => a.nanos >= b.nanos);
const plusTD = lift2(addTimestampDuration);
const minusTD = lift2(subtractTimestampDuration);
const minusTT = lift2(subtractTimestamps);
const plusDD = lift2(addDurations);
const minusDD = lift2(subtractDurations);
const T = parseTimestamp;
const D = parseDuration;
const at = (t: Maybe<Timestamp>, field: TimestampField, zone?: string): Maybe<bigint> =>
  t instanceof CelError ? t : timestampAccessor(t, field, zone);

// Timestamps and durations are outcomes only of the range cases, which expect an error instead.
type Outcome = Maybe<bigint | string | boolean | Timestamp | Duration>;

/**
 * Every case of the conformance section `timestamps`, keyed `suite/name`, as direct calls of this module.
 * The CEL expression is beside each; equality and ordering compare nanoseconds.
 */
const CONFORMANCE: Readonly<Record<string, () => Outcome>> = {
  // int(timestamp('2009-02-13T23:31:30Z'))
  "timestamp_conversions/toInt_timestamp": () => lift1(timestampSeconds)(T("2009-02-13T23:31:30Z")),
  // string(timestamp('2009-02-13T23:31:30Z'))
  "timestamp_conversions/toString_timestamp": () => lift1(formatTimestamp)(T("2009-02-13T23:31:30Z")),
  // string(timestamp('9999-12-31T23:59:59.999999999Z'))
  "timestamp_conversions/toString_timestamp_nanos": () =>
    lift1(formatTimestamp)(T("9999-12-31T23:59:59.999999999Z")),
  // type(timestamp('2009-02-13T23:31:30Z'))
  "timestamp_conversions/toType_timestamp": () => lift1(typeName)(T("2009-02-13T23:31:30Z")),
  // google.protobuf.Timestamp == type(timestamp('2009-02-13T23:31:30Z'))
  "timestamp_conversions/type_comparison": () =>
    lift1((t: Timestamp) => typeName(t) === "google.protobuf.Timestamp")(T("2009-02-13T23:31:30Z")),
  // string(duration('1000000s'))
  "duration_conversions/toString_duration": () => lift1(formatDuration)(D("1000000s")),
  // type(duration('1000000s'))
  "duration_conversions/toType_duration": () => lift1(typeName)(D("1000000s")),
  // google.protobuf.Duration == type(duration('1000000s'))
  "duration_conversions/type_comparison": () =>
    lift1((d: Duration) => typeName(d) === "google.protobuf.Duration")(D("1000000s")),

  "timestamp_selectors/getDate": () => at(T("2009-02-13T23:31:30Z"), "getDate"),
  "timestamp_selectors/getDayOfMonth": () => at(T("2009-02-13T23:31:30Z"), "getDayOfMonth"),
  "timestamp_selectors/getDayOfWeek": () => at(T("2009-02-13T23:31:30Z"), "getDayOfWeek"),
  "timestamp_selectors/getDayOfYear": () => at(T("2009-02-13T23:31:30Z"), "getDayOfYear"),
  "timestamp_selectors/getFullYear": () => at(T("2009-02-13T23:31:30Z"), "getFullYear"),
  "timestamp_selectors/getHours": () => at(T("2009-02-13T23:31:30Z"), "getHours"),
  "timestamp_selectors/getMilliseconds": () => at(T("2009-02-13T23:31:20.123456789Z"), "getMilliseconds"),
  "timestamp_selectors/getMinutes": () => at(T("2009-02-13T23:31:30Z"), "getMinutes"),
  "timestamp_selectors/getMonth": () => at(T("2009-02-13T23:31:30Z"), "getMonth"),
  "timestamp_selectors/getSeconds": () => at(T("2009-02-13T23:31:30Z"), "getSeconds"),

  "timestamp_selectors_tz/getDate": () => at(T("2009-02-13T23:31:30Z"), "getDate", "Australia/Sydney"),
  "timestamp_selectors_tz/getDayOfMonth_name_pos": () =>
    at(T("2009-02-13T23:31:30Z"), "getDayOfMonth", "US/Central"),
  "timestamp_selectors_tz/getDayOfMonth_numerical_pos": () =>
    at(T("2009-02-13T23:31:30Z"), "getDayOfMonth", "+11:00"),
  "timestamp_selectors_tz/getDayOfMonth_numerical_neg": () =>
    at(T("2009-02-13T02:00:00Z"), "getDayOfMonth", "-02:30"),
  "timestamp_selectors_tz/getDayOfMonth_name_neg": () =>
    at(T("2009-02-13T02:00:00Z"), "getDayOfMonth", "America/St_Johns"),
  "timestamp_selectors_tz/getDayOfWeek": () => at(T("2009-02-13T23:31:30Z"), "getDayOfWeek", "UTC"),
  "timestamp_selectors_tz/getDayOfYear": () => at(T("2009-02-13T23:31:30Z"), "getDayOfYear", "US/Central"),
  "timestamp_selectors_tz/getFullYear": () => at(T("2009-02-13T23:31:30Z"), "getFullYear", "-09:30"),
  "timestamp_selectors_tz/getHours": () => at(T("2009-02-13T23:31:30Z"), "getHours", "02:00"),
  "timestamp_selectors_tz/getMinutes": () => at(T("2009-02-13T23:31:30Z"), "getMinutes", "Asia/Kathmandu"),
  "timestamp_selectors_tz/getMonth": () => at(T("2009-02-13T23:31:30Z"), "getMonth", "UTC"),
  "timestamp_selectors_tz/getSeconds": () => at(T("2009-02-13T23:31:30Z"), "getSeconds", "-00:00"),

  "timestamp_equality/eq_same": () => eq(T("2009-02-13T23:31:30Z"), T("2009-02-13T23:31:30Z")),
  "timestamp_equality/eq_diff": () => eq(T("2009-02-13T23:31:29Z"), T("2009-02-13T23:31:30Z")),
  "timestamp_equality/neq_same": () => ne(T("1945-05-07T02:41:00Z"), T("1945-05-07T02:41:00Z")),
  "timestamp_equality/neq_diff": () => ne(T("2000-01-01T00:00:00Z"), T("2001-01-01T00:00:00Z")),
  "duration_equality/eq_same": () => eq(D("123s"), D("123s")),
  "duration_equality/eq_diff": () => eq(D("60s"), D("3600s")),
  "duration_equality/neq_same": () => ne(D("604800s"), D("604800s")),
  "duration_equality/neq_diff": () => ne(D("86400s"), D("86164s")),

  // timestamp('2009-02-13T23:00:00Z') + duration('240s') == timestamp('2009-02-13T23:04:00Z')
  "timestamp_arithmetic/add_duration_to_time": () =>
    eq(plusTD(T("2009-02-13T23:00:00Z"), D("240s")), T("2009-02-13T23:04:00Z")),
  // duration('120s') + timestamp('2009-02-13T23:01:00Z') == timestamp('2009-02-13T23:03:00Z')
  "timestamp_arithmetic/add_time_to_duration": () =>
    eq(plusTD(T("2009-02-13T23:01:00Z"), D("120s")), T("2009-02-13T23:03:00Z")),
  "timestamp_arithmetic/add_duration_to_duration": () => eq(plusDD(D("600s"), D("50s")), D("650s")),
  "timestamp_arithmetic/add_time_to_duration_nanos_negative": () =>
    eq(plusTD(T("0001-01-01T00:00:01.000000001Z"), D("-999999999ns")), T("0001-01-01T00:00:00.000000002Z")),
  "timestamp_arithmetic/add_time_to_duration_nanos_positive": () =>
    eq(plusTD(T("0001-01-01T00:00:01.999999999Z"), D("999999999ns")), T("0001-01-01T00:00:02.999999998Z")),
  "timestamp_arithmetic/subtract_duration_from_time": () =>
    eq(minusTD(T("2009-02-13T23:10:00Z"), D("600s")), T("2009-02-13T23:00:00Z")),
  "timestamp_arithmetic/subtract_time_from_time": () =>
    eq(minusTT(T("2009-02-13T23:31:00Z"), T("2009-02-13T23:29:00Z")), D("120s")),
  "timestamp_arithmetic/subtract_duration_from_duration": () => eq(minusDD(D("900s"), D("42s")), D("858s")),

  "comparisons/leq_timestamp_true": () => le(T("2009-02-13T23:00:00Z"), T("2009-02-13T23:00:00Z")),
  "comparisons/leq_timestamp_false": () => le(T("2009-02-13T23:00:00Z"), T("2009-02-13T22:59:59Z")),
  "comparisons/leq_duration_true": () => le(D("200s"), D("200s")),
  "comparisons/leq_duration_false": () => le(D("300s"), D("200s")),
  "comparisons/less_timestamp_true": () => lt(T("2009-02-13T23:00:00Z"), T("2009-03-13T23:00:00Z")),
  "comparisons/less_duration_true": () => lt(D("200s"), D("300s")),
  "comparisons/geq_timestamp_true": () => ge(T("2009-02-13T23:00:00Z"), T("2009-02-13T23:00:00Z")),
  "comparisons/geq_timestamp_false": () => ge(T("2009-02-13T22:58:00Z"), T("2009-02-13T23:00:00Z")),
  "comparisons/geq_duration_true": () => ge(D("200s"), D("200s")),
  "comparisons/geq_duration_false": () => ge(D("120s"), D("200s")),
  "comparisons/greater_timestamp_true": () => gt(T("2009-02-13T23:59:00Z"), T("2009-02-13T23:00:00Z")),
  "comparisons/greater_duration_true": () => gt(D("300s"), D("200s")),

  "duration_converters/get_hours": () => lift1((d: Duration) => durationAccessor(d, "getHours"))(D("10000s")),
  // x.getMilliseconds() with x bound to the google.protobuf.Duration "123.321456789s"
  "duration_converters/get_milliseconds": () =>
    lift1((d: Duration) => durationAccessor(d, "getMilliseconds"))(D("123.321456789s")),
  "duration_converters/get_minutes": () =>
    lift1((d: Duration) => durationAccessor(d, "getMinutes"))(D("3730s")),
  "duration_converters/get_seconds": () =>
    lift1((d: Duration) => durationAccessor(d, "getSeconds"))(D("3730s")),

  "timestamp_range/from_string_under": () => T("0000-01-01T00:00:00Z"),
  "timestamp_range/from_string_over": () => T("10000-01-01T00:00:00Z"),
  "timestamp_range/add_duration_under": () => plusTD(T("0001-01-01T00:00:00Z"), D("-1s")),
  "timestamp_range/add_duration_over": () => plusTD(T("9999-12-31T23:59:59Z"), D("1s")),
  "timestamp_range/add_duration_nanos_over": () => plusTD(T("9999-12-31T23:59:59.999999999Z"), D("1ns")),
  "timestamp_range/add_duration_nanos_under": () => plusTD(T("0001-01-01T00:00:00Z"), D("-1ns")),
  "timestamp_range/sub_time_duration_over": () =>
    minusTT(T("9999-12-31T23:59:59Z"), T("0001-01-01T00:00:00Z")),
  "timestamp_range/sub_time_duration_under": () =>
    minusTT(T("0001-01-01T00:00:00Z"), T("9999-12-31T23:59:59Z")),

  // 200000000000s is already past int64 nanoseconds, so these fail at the first duration().
  "duration_range/from_string_under": () => D("-320000000000s"),
  "duration_range/from_string_over": () => D("320000000000s"),
  "duration_range/add_under": () => plusDD(D("-200000000000s"), D("-200000000000s")),
  "duration_range/add_over": () => plusDD(D("200000000000s"), D("200000000000s")),
  "duration_range/sub_under": () => minusDD(D("-200000000000s"), D("200000000000s")),
  "duration_range/sub_over": () => minusDD(D("200000000000s"), D("-200000000000s")),
};

type Expected = { readonly error: true } | { readonly value: bigint | string | boolean };

/** What a conformance case expects: a value (an int, string, bool or type name) or an evaluation error. */
function expectedOf(test: IncrementalTest): Expected {
  const matcher = test.original.resultMatcher;
  if (matcher.case === "evalError") return { error: true };
  if (matcher.case === "value") {
    const kind = matcher.value.kind;
    switch (kind.case) {
      case "int64Value":
      case "stringValue":
      case "boolValue":
      case "typeValue":
        return { value: kind.value };
    }
  }
  throw new Error(`no expectation this test understands in ${test.name}`);
}

function timestampCases(): { readonly path: string; readonly test: IncrementalTest }[] {
  const section = getConformanceSuite().suites.find((s) => s.name === "timestamps");
  if (section === undefined) throw new Error("the conformance data has no timestamps section");
  return section.suites.flatMap((suite) =>
    suite.tests.map((test) => ({ path: `${suite.name}/${test.name}`, test })),
  );
}

describe("the conformance section timestamps", () => {
  const cases = timestampCases();

  it("has a direct test for every case, and none for a case it lacks", () => {
    expect(Object.keys(CONFORMANCE).sort()).toEqual(cases.map((c) => c.path).sort());
  });

  for (const { path, test } of cases) {
    it(path, () => {
      const run = CONFORMANCE[path];
      if (run === undefined) throw new Error(`no direct test for ${path}`);
      const expected = expectedOf(test);
      const actual = run();
      if ("error" in expected) expect(actual).toBeInstanceOf(CelError);
      else expect(actual).toEqual(expected.value);
    });
  }
});

describe("parseTimestamp", () => {
  it("reads UTC instants to the nanosecond", () => {
    expect(ts("1970-01-01T00:00:00Z").nanos).toBe(0n);
    expect(ts("1970-01-01T00:00:00.000000001Z").nanos).toBe(1n);
    expect(ts("1969-12-31T23:59:59.999999999Z").nanos).toBe(-1n);
    expect(ts("2009-02-13T23:31:30Z").nanos).toBe(1_234_567_890n * SECOND);
    expect(ts("2009-02-13T23:31:30.1Z").nanos).toBe(1_234_567_890n * SECOND + 100_000_000n);
  });

  it("reads the range edges exactly", () => {
    expect(ts("0001-01-01T00:00:00Z").nanos).toBe(TIMESTAMP_MIN);
    expect(ts("9999-12-31T23:59:59.999999999Z").nanos).toBe(TIMESTAMP_MAX);
  });

  it("rejects instants past the range, even when the text is a valid date", () => {
    expect(errorOf(parseTimestamp("0000-12-31T23:59:59.999999999Z"))).toBe("timestamp overflow");
    expect(errorOf(parseTimestamp("0001-01-01T00:00:00+00:01"))).toBe("timestamp overflow");
    expect(errorOf(parseTimestamp("9999-12-31T23:59:59.999999999-00:01"))).toBe("timestamp overflow");
    expect(errorOf(parseTimestamp("0000-01-01T00:00:00Z"))).toBe("timestamp overflow");
  });

  it("applies numeric offsets, which can bring a year-0 or year-10000 wall clock into range", () => {
    expect(ts("2009-02-13T23:31:30+01:00").nanos).toBe(ts("2009-02-13T22:31:30Z").nanos);
    expect(ts("2009-02-13T23:31:30-08:00").nanos).toBe(ts("2009-02-14T07:31:30Z").nanos);
    expect(ts("2009-02-13T23:31:30.5-02:30").nanos).toBe(ts("2009-02-14T02:01:30.5Z").nanos);
    expect(ts("2009-02-13T23:31:30+00:00").nanos).toBe(ts("2009-02-13T23:31:30Z").nanos);
    expect(ts("2009-02-13T23:31:30-00:00").nanos).toBe(ts("2009-02-13T23:31:30Z").nanos);
    expect(ts("2009-02-13T23:31:30+23:59").nanos).toBe(ts("2009-02-12T23:32:30Z").nanos);
    expect(ts("0000-12-31T23:00:00-01:00").nanos).toBe(TIMESTAMP_MIN);
  });

  it("keeps the first nine fraction digits, truncating the rest as Go does", () => {
    expect(ts("1970-01-01T00:00:00.123456789Z").nanos).toBe(123_456_789n);
    expect(ts("1970-01-01T00:00:00.1234567891Z").nanos).toBe(123_456_789n);
    expect(ts("1970-01-01T00:00:00.9999999999999Z").nanos).toBe(999_999_999n);
    expect(ts("1970-01-01T00:00:00.000Z").nanos).toBe(0n);
  });

  it("knows leap years", () => {
    expect(formatTimestamp(ts("2000-02-29T00:00:00Z"))).toBe("2000-02-29T00:00:00Z");
    expect(formatTimestamp(ts("2024-02-29T12:00:00Z"))).toBe("2024-02-29T12:00:00Z");
    expect(formatTimestamp(ts("0004-02-29T00:00:00Z"))).toBe("0004-02-29T00:00:00Z");
    expect(errorOf(parseTimestamp("1900-02-29T00:00:00Z"))).toBe(
      'invalid RFC 3339 timestamp "1900-02-29T00:00:00Z": day out of range',
    );
    expect(parseTimestamp("2023-02-29T00:00:00Z")).toBeInstanceOf(CelError);
    expect(parseTimestamp("2023-04-31T00:00:00Z")).toBeInstanceOf(CelError);
    expect(parseTimestamp("2023-12-31T00:00:00Z")).toBeInstanceOf(Timestamp);
  });

  it("rejects what RFC 3339, as cel-go reads it, does not allow", () => {
    const invalid = [
      "",
      "2009-02-13",
      "2009-02-13T23:31:30",
      "2009-02-13 23:31:30Z",
      "2009-02-13t23:31:30Z",
      "2009-02-13T23:31:30z",
      "2009-02-13T23:31:30,5Z",
      "2009-02-13T23:31:30.Z",
      "2009-02-13T3:31:30Z",
      "2009-2-13T23:31:30Z",
      "209-02-13T23:31:30Z",
      "10000-01-01T00:00:00Z",
      "2009-02-13T23:31:30+0100",
      "2009-02-13T23:31:30+01",
      "2009-02-13T23:31:30+24:00",
      "2009-02-13T23:31:30+00:60",
      "2009-13-01T00:00:00Z",
      "2009-00-01T00:00:00Z",
      "2009-02-00T00:00:00Z",
      "2009-02-32T00:00:00Z",
      "2009-02-13T24:00:00Z",
      "2009-02-13T23:60:00Z",
      " 2009-02-13T23:31:30Z",
      "2009-02-13T23:31:30Z ",
      "2009-02-13T23:31:30ZZ",
      "\u0662\u0660\u0660\u0669-02-13T23:31:30Z",
    ];
    for (const s of invalid)
      expect(errorOf(parseTimestamp(s))).toBe(`invalid RFC 3339 timestamp ${JSON.stringify(s)}`);
  });

  it("rejects a leap second, as Go does", () => {
    expect(errorOf(parseTimestamp("2016-12-31T23:59:60Z"))).toBe(
      'invalid RFC 3339 timestamp "2016-12-31T23:59:60Z": second out of range',
    );
  });
});

describe("formatTimestamp", () => {
  it("prints UTC with the fraction's trailing zeros trimmed, and no fraction when it is zero", () => {
    expect(formatTimestamp(new Timestamp(0n))).toBe("1970-01-01T00:00:00Z");
    expect(formatTimestamp(new Timestamp(1_500_000_000n))).toBe("1970-01-01T00:00:01.5Z");
    expect(formatTimestamp(new Timestamp(10n))).toBe("1970-01-01T00:00:00.00000001Z");
    expect(formatTimestamp(new Timestamp(123_000n))).toBe("1970-01-01T00:00:00.000123Z");
    expect(formatTimestamp(ts("2009-02-13T23:31:30+01:00"))).toBe("2009-02-13T22:31:30Z");
  });

  it("prints instants before the epoch with their fraction counted forward from the whole second", () => {
    expect(formatTimestamp(new Timestamp(-1n))).toBe("1969-12-31T23:59:59.999999999Z");
    expect(formatTimestamp(new Timestamp(-500_000_000n))).toBe("1969-12-31T23:59:59.5Z");
    expect(formatTimestamp(new Timestamp(-SECOND))).toBe("1969-12-31T23:59:59Z");
    expect(formatTimestamp(new Timestamp(-SECOND - 1n))).toBe("1969-12-31T23:59:58.999999999Z");
  });

  it("pads years to four digits", () => {
    expect(formatTimestamp(new Timestamp(TIMESTAMP_MIN))).toBe("0001-01-01T00:00:00Z");
    expect(formatTimestamp(new Timestamp(TIMESTAMP_MAX))).toBe("9999-12-31T23:59:59.999999999Z");
    expect(formatTimestamp(ts("0999-07-04T01:02:03Z"))).toBe("0999-07-04T01:02:03Z");
  });

  it("round-trips through parseTimestamp", () => {
    for (const s of [
      "2009-02-13T23:31:30Z",
      "0001-01-01T00:00:00.000000001Z",
      "1969-07-20T20:17:40.1Z",
      "1600-02-29T23:59:59.999Z",
      "9999-12-31T23:59:59.999999999Z",
    ]) {
      expect(formatTimestamp(ts(s))).toBe(s);
    }
    fc.assert(
      fc.property(fc.bigInt({ min: TIMESTAMP_MIN, max: TIMESTAMP_MAX }), (nanos) => {
        expect(ts(formatTimestamp(new Timestamp(nanos))).nanos).toBe(nanos);
      }),
      { numRuns: runs(500) },
    );
  });
});

describe("timestampFromSeconds and timestampSeconds", () => {
  it("convert from seconds since the epoch, range-checked", () => {
    expect(formatTimestamp(ok(timestampFromSeconds(0n)))).toBe("1970-01-01T00:00:00Z");
    expect(formatTimestamp(ok(timestampFromSeconds(1_234_567_890n)))).toBe("2009-02-13T23:31:30Z");
    expect(formatTimestamp(ok(timestampFromSeconds(-62_135_596_800n)))).toBe("0001-01-01T00:00:00Z");
    expect(formatTimestamp(ok(timestampFromSeconds(253_402_300_799n)))).toBe("9999-12-31T23:59:59Z");
    expect(errorOf(timestampFromSeconds(-62_135_596_801n))).toBe("timestamp overflow");
    expect(errorOf(timestampFromSeconds(253_402_300_800n))).toBe("timestamp overflow");
    expect(errorOf(timestampFromSeconds(INT64_MAX))).toBe("timestamp overflow");
    expect(errorOf(timestampFromSeconds(INT64_MIN))).toBe("timestamp overflow");
  });

  it("round down to whole seconds, as Go's Unix() does, also before the epoch", () => {
    expect(timestampSeconds(new Timestamp(999_999_999n))).toBe(0n);
    expect(timestampSeconds(new Timestamp(-1n))).toBe(-1n);
    expect(timestampSeconds(new Timestamp(-500_000_000n))).toBe(-1n);
    expect(timestampSeconds(new Timestamp(-SECOND))).toBe(-1n);
    expect(timestampSeconds(new Timestamp(-SECOND - 1n))).toBe(-2n);
    expect(timestampSeconds(new Timestamp(TIMESTAMP_MIN))).toBe(-62_135_596_800n);
    expect(timestampSeconds(new Timestamp(TIMESTAMP_MAX))).toBe(253_402_300_799n);
    fc.assert(
      fc.property(fc.bigInt({ min: TIMESTAMP_MIN, max: TIMESTAMP_MAX }), (nanos) => {
        const seconds = timestampSeconds(new Timestamp(nanos));
        expect(seconds * SECOND <= nanos && nanos < (seconds + 1n) * SECOND).toBe(true);
        expect(ok(timestampFromSeconds(seconds)).nanos).toBe(seconds * SECOND);
      }),
      { numRuns: runs(300) },
    );
  });
});

describe("parseDuration", () => {
  it("reads Go's duration syntax", () => {
    const cases: [string, bigint][] = [
      ["0", 0n],
      ["+0", 0n],
      ["-0", 0n],
      ["0s", 0n],
      ["1h30m", 5_400n * SECOND],
      ["1.5h", 5_400n * SECOND],
      ["-1.5s", -1_500_000_000n],
      ["+3m", 180n * SECOND],
      ["100ms", 100_000_000n],
      ["1us", 1_000n],
      ["1\u00b5s", 1_000n],
      ["1\u03bcs", 1_000n],
      ["1ns", 1n],
      ["2h45m30.5s", 9_930_500_000_000n],
      ["1m1s1ms1us1ns", 61_001_001_001n],
      ["1h1h", 7_200n * SECOND],
      [".5s", 500_000_000n],
      ["5.s", 5n * SECOND],
      ["0.000000001s", 1n],
      ["1.0000000019s", 1_000_000_001n],
      ["0.5ns", 0n],
      ["0.5ns0.5ns", 0n],
      ["000123s", 123n * SECOND],
      ["9223372036854775807ns", INT64_MAX],
      ["-9223372036854775808ns", INT64_MIN],
      ["2562047h47m16.854775807s", INT64_MAX],
      ["-2562047h47m16.854775808s", INT64_MIN],
    ];
    for (const [s, nanos] of cases) expect([s, nanosOf(s)]).toEqual([s, nanos]);
  });

  it("rejects what does not fit int64 nanoseconds", () => {
    for (const s of [
      "9223372036854775808ns",
      "-9223372036854775809ns",
      "2562047h47m16.854775808s",
      "320000000000s",
      "-320000000000s",
      "99999999999999999999999h",
    ]) {
      expect(errorOf(parseDuration(s))).toBe(`duration overflow: ${JSON.stringify(s)}`);
    }
  });

  it("names what is wrong with malformed text", () => {
    expect(errorOf(parseDuration(""))).toBe('invalid duration ""');
    expect(errorOf(parseDuration("-"))).toBe('invalid duration "-"');
    expect(errorOf(parseDuration("s"))).toBe('invalid duration "s"');
    expect(errorOf(parseDuration(".s"))).toBe('invalid duration ".s"');
    expect(errorOf(parseDuration("--1s"))).toBe('invalid duration "--1s"');
    expect(errorOf(parseDuration("1"))).toBe('missing unit in duration "1"');
    expect(errorOf(parseDuration("00"))).toBe('missing unit in duration "00"');
    expect(errorOf(parseDuration("1.5.5s"))).toBe('missing unit in duration "1.5.5s"');
    expect(errorOf(parseDuration("1h30"))).toBe('missing unit in duration "1h30"');
    expect(errorOf(parseDuration("1d"))).toBe(
      'unknown unit "d" in duration "1d": CEL durations have no "d" unit, so write duration("24h")',
    );
    expect(errorOf(parseDuration("1H"))).toBe('unknown unit "H" in duration "1H"');
    expect(errorOf(parseDuration("1h 30m"))).toBe('unknown unit "h " in duration "1h 30m"');
    expect(errorOf(parseDuration("1e3s"))).toBe('unknown unit "e" in duration "1e3s"');
    expect(errorOf(parseDuration(" 1s"))).toBe('invalid duration " 1s"');
  });
});

describe("formatDuration", () => {
  it("prints seconds with up to nine fraction digits, trailing zeros trimmed", () => {
    const cases: [bigint, string][] = [
      [0n, "0s"],
      [1n, "0.000000001s"],
      [-1n, "-0.000000001s"],
      [100_000_000n, "0.1s"],
      [1_500_000_000n, "1.5s"],
      [-1_500_000_000n, "-1.5s"],
      [1_000_000n * SECOND, "1000000s"],
      [123_321_456_789n, "123.321456789s"],
      [INT64_MAX, "9223372036.854775807s"],
      [INT64_MIN, "-9223372036.854775808s"],
    ];
    for (const [nanos, text] of cases) expect(formatDuration(new Duration(nanos))).toBe(text);
  });

  it("round-trips through parseDuration", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (nanos) => {
        expect(nanosOf(formatDuration(new Duration(nanos)))).toBe(nanos);
      }),
      { numRuns: runs(500) },
    );
  });
});

describe("timestamp and duration arithmetic", () => {
  const max = new Timestamp(TIMESTAMP_MAX);
  const min = new Timestamp(TIMESTAMP_MIN);
  const ns = (n: bigint) => new Duration(n);

  it("adds and subtracts to the nanosecond, carrying across seconds in both directions", () => {
    expect(formatTimestamp(ok(addTimestampDuration(ts("2009-02-13T23:31:30.9Z"), dur("200ms"))))).toBe(
      "2009-02-13T23:31:31.1Z",
    );
    expect(formatTimestamp(ok(addTimestampDuration(new Timestamp(500_000_000n), dur("-1s"))))).toBe(
      "1969-12-31T23:59:59.5Z",
    );
    expect(formatTimestamp(ok(subtractTimestampDuration(ts("2024-03-01T00:00:00Z"), dur("24h"))))).toBe(
      "2024-02-29T00:00:00Z",
    );
    expect(
      formatDuration(ok(subtractTimestamps(ts("2024-03-01T00:00:00Z"), ts("2024-02-01T00:00:00Z")))),
    ).toBe("2505600s");
    expect(ok(subtractTimestamps(ts("1969-12-31T23:59:59.5Z"), ts("1970-01-01T00:00:00.25Z"))).nanos).toBe(
      -750_000_000n,
    );
  });

  it("keeps timestamps within 0001-01-01 and 9999-12-31T23:59:59.999999999Z", () => {
    expect(ok(addTimestampDuration(new Timestamp(TIMESTAMP_MAX - 1n), ns(1n))).nanos).toBe(TIMESTAMP_MAX);
    expect(ok(subtractTimestampDuration(new Timestamp(TIMESTAMP_MIN + 1n), ns(1n))).nanos).toBe(
      TIMESTAMP_MIN,
    );
    expect(errorOf(addTimestampDuration(max, ns(1n)))).toBe("timestamp overflow");
    expect(errorOf(addTimestampDuration(min, ns(-1n)))).toBe("timestamp overflow");
    expect(errorOf(subtractTimestampDuration(min, ns(1n)))).toBe("timestamp overflow");
    expect(errorOf(subtractTimestampDuration(max, ns(-1n)))).toBe("timestamp overflow");
    expect(errorOf(addTimestampDuration(max, ns(INT64_MAX)))).toBe("timestamp overflow");
  });

  it("subtracts the most negative duration exactly", () => {
    // cel-go negates the duration first and reports an overflow; the exact result is in range.
    expect(formatTimestamp(ok(subtractTimestampDuration(min, ns(INT64_MIN))))).toBe(
      "0293-04-11T23:47:16.854775808Z",
    );
  });

  it("keeps durations within int64 nanoseconds", () => {
    const epoch = new Timestamp(0n);
    const latest = ok(addTimestampDuration(epoch, ns(INT64_MAX)));
    expect(ok(subtractTimestamps(latest, epoch)).nanos).toBe(INT64_MAX);
    expect(errorOf(subtractTimestamps(ok(addTimestampDuration(latest, ns(1n))), epoch))).toBe(
      "duration overflow",
    );
    expect(errorOf(subtractTimestamps(max, min))).toBe("duration overflow");
    expect(errorOf(subtractTimestamps(min, max))).toBe("duration overflow");
    expect(ok(addDurations(ns(INT64_MAX - 1n), ns(1n))).nanos).toBe(INT64_MAX);
    expect(errorOf(addDurations(ns(INT64_MAX), ns(1n)))).toBe("duration overflow");
    expect(errorOf(addDurations(ns(INT64_MIN), ns(-1n)))).toBe("duration overflow");
    expect(ok(subtractDurations(ns(INT64_MIN + 1n), ns(1n))).nanos).toBe(INT64_MIN);
    expect(errorOf(subtractDurations(ns(INT64_MIN), ns(1n)))).toBe("duration overflow");
    expect(errorOf(subtractDurations(ns(0n), ns(INT64_MIN)))).toBe("duration overflow");
    expect(ok(subtractDurations(ns(-1n), ns(INT64_MIN))).nanos).toBe(INT64_MAX);
  });
});

describe("timestampAccessor", () => {
  const fields = (t: Timestamp, zone?: string) =>
    Object.fromEntries(
      (
        [
          "getFullYear",
          "getMonth",
          "getDayOfYear",
          "getDayOfMonth",
          "getDate",
          "getDayOfWeek",
          "getHours",
          "getMinutes",
          "getSeconds",
          "getMilliseconds",
        ] as const
      ).map((f) => [f, ok(timestampAccessor(t, f, zone))]),
    );

  it("counts months, days of the month and days of the year from 0, dates from 1, weekdays from Sunday", () => {
    expect(fields(ts("2009-02-13T23:31:30.123456789Z"))).toEqual({
      getFullYear: 2009n,
      getMonth: 1n,
      getDayOfYear: 43n,
      getDayOfMonth: 12n,
      getDate: 13n,
      getDayOfWeek: 5n,
      getHours: 23n,
      getMinutes: 31n,
      getSeconds: 30n,
      getMilliseconds: 123n,
    });
    expect(fields(ts("2024-01-01T00:00:00Z"))).toMatchObject({ getMonth: 0n, getDayOfYear: 0n, getDate: 1n });
    expect(ok(timestampAccessor(ts("2024-01-07T12:00:00Z"), "getDayOfWeek"))).toBe(0n);
    expect(ok(timestampAccessor(ts("2024-01-06T12:00:00Z"), "getDayOfWeek"))).toBe(6n);
  });

  it("knows leap years", () => {
    expect(fields(ts("2024-02-29T00:00:00Z"))).toMatchObject({
      getMonth: 1n,
      getDate: 29n,
      getDayOfYear: 59n,
    });
    expect(ok(timestampAccessor(ts("2024-12-31T00:00:00Z"), "getDayOfYear"))).toBe(365n);
    expect(ok(timestampAccessor(ts("2023-12-31T00:00:00Z"), "getDayOfYear"))).toBe(364n);
    expect(ok(timestampAccessor(ts("2000-12-31T00:00:00Z"), "getDayOfYear"))).toBe(365n);
    expect(ok(timestampAccessor(ts("2100-12-31T00:00:00Z"), "getDayOfYear"))).toBe(364n);
  });

  it("reads the range edges, whose wall clock can fall in year 0 or 10000", () => {
    expect(fields(new Timestamp(TIMESTAMP_MIN))).toMatchObject({
      getFullYear: 1n,
      getMonth: 0n,
      getDate: 1n,
    });
    expect(ok(timestampAccessor(new Timestamp(TIMESTAMP_MIN), "getDayOfWeek"))).toBe(1n);
    expect(fields(new Timestamp(TIMESTAMP_MAX))).toMatchObject({
      getFullYear: 9999n,
      getMonth: 11n,
      getDate: 31n,
      getDayOfWeek: 5n,
      getMilliseconds: 999n,
    });
    expect(fields(new Timestamp(TIMESTAMP_MIN), "-08:00")).toMatchObject({
      getFullYear: 0n,
      getMonth: 11n,
      getDate: 31n,
      getHours: 16n,
    });
    expect(fields(new Timestamp(TIMESTAMP_MAX), "+01:00")).toMatchObject({
      getFullYear: 10000n,
      getMonth: 0n,
      getDate: 1n,
      getHours: 0n,
    });
  });

  it("reads instants before the epoch with a fraction from the whole second below them", () => {
    expect(fields(new Timestamp(-1n))).toMatchObject({
      getFullYear: 1969n,
      getDate: 31n,
      getHours: 23n,
      getMinutes: 59n,
      getSeconds: 59n,
      getMilliseconds: 999n,
    });
    expect(fields(new Timestamp(-1_500_000_000n))).toMatchObject({ getSeconds: 58n, getMilliseconds: 500n });
  });

  it("agrees with JavaScript's UTC calendar across the whole range", () => {
    const msMin = Number(TIMESTAMP_MIN / 1_000_000n);
    const msMax = Number(TIMESTAMP_MAX / 1_000_000n);
    fc.assert(
      fc.property(fc.integer({ min: msMin, max: msMax }), (ms) => {
        const date = new Date(ms);
        const startOfYear = new Date(ms);
        startOfYear.setUTCMonth(0, 1);
        startOfYear.setUTCHours(0, 0, 0, 0);
        const t = new Timestamp(BigInt(ms) * 1_000_000n);
        expect(fields(t)).toEqual({
          getFullYear: BigInt(date.getUTCFullYear()),
          getMonth: BigInt(date.getUTCMonth()),
          getDayOfYear: BigInt(Math.floor((ms - startOfYear.getTime()) / 86_400_000)),
          getDayOfMonth: BigInt(date.getUTCDate() - 1),
          getDate: BigInt(date.getUTCDate()),
          getDayOfWeek: BigInt(date.getUTCDay()),
          getHours: BigInt(date.getUTCHours()),
          getMinutes: BigInt(date.getUTCMinutes()),
          getSeconds: BigInt(date.getUTCSeconds()),
          getMilliseconds: BigInt(date.getUTCMilliseconds()),
        });
      }),
      { numRuns: runs(500) },
    );
  });

  it("reads fixed offsets as cel-go does, sign and all", () => {
    const t = ts("2009-02-13T23:31:30Z");
    expect(ok(timestampAccessor(t, "getHours", "+11:00"))).toBe(10n);
    expect(ok(timestampAccessor(t, "getHours", "-08:00"))).toBe(15n);
    expect(ok(timestampAccessor(t, "getHours", "02:00"))).toBe(1n);
    expect(fields(t, "+05:45")).toMatchObject({ getDate: 14n, getHours: 5n, getMinutes: 16n });
    expect(fields(t, "-02:30")).toMatchObject({ getHours: 21n, getMinutes: 1n });
    expect(fields(t, "-00:30")).toMatchObject({ getHours: 23n, getMinutes: 1n });
    expect(fields(t, "+23:59")).toMatchObject({ getDate: 14n, getHours: 23n, getMinutes: 30n });
  });

  it("rejects malformed fixed offsets", () => {
    const t = ts("2009-02-13T23:31:30Z");
    expect(errorOf(timestampAccessor(t, "getHours", "+24:00"))).toBe(
      "timezone offset hours out of range [-23, 23]: +24:00",
    );
    expect(errorOf(timestampAccessor(t, "getHours", "-99:00"))).toBe(
      "timezone offset hours out of range [-23, 23]: -99:00",
    );
    expect(errorOf(timestampAccessor(t, "getHours", "+05:60"))).toBe(
      "timezone offset minutes out of range [0, 59]: +05:60",
    );
    expect(errorOf(timestampAccessor(t, "getHours", "+05:-30"))).toBe(
      "timezone offset minutes out of range [0, 59]: +05:-30",
    );
    for (const zone of ["+5:x", ":30", "+05:", "05:30:00", "+-5:00", "+ 5:00", "+05:3 "]) {
      expect(errorOf(timestampAccessor(t, "getHours", zone))).toBe(
        `invalid time zone offset ${JSON.stringify(zone)}`,
      );
    }
  });

  it("reads IANA zones with their offset at the instant, across daylight-saving changes", () => {
    const newYork = (s: string) => ok(timestampAccessor(ts(s), "getHours", "America/New_York"));
    const fixed = (s: string) => ok(timestampAccessor(ts(s), "getHours", "-05:00"));
    // Clocks spring forward at 2:00 EST on 2024-03-10 and fall back at 2:00 EDT on 2024-11-03.
    expect(newYork("2024-03-10T06:59:59Z")).toBe(1n);
    expect(newYork("2024-03-10T07:00:00Z")).toBe(3n);
    expect(fixed("2024-03-10T07:00:00Z")).toBe(2n);
    expect(newYork("2024-11-03T05:59:59Z")).toBe(1n);
    expect(newYork("2024-11-03T06:00:00Z")).toBe(1n);
    expect(fixed("2024-11-03T05:59:59Z")).toBe(0n);
    // Sydney goes from +11:00 to +10:00 on 2024-04-07 at 3:00 local time.
    const sydney = (s: string) => ok(timestampAccessor(ts(s), "getHours", "Australia/Sydney"));
    expect(sydney("2024-04-06T15:59:59Z")).toBe(2n);
    expect(sydney("2024-04-06T16:00:00Z")).toBe(2n);
    expect(ok(timestampAccessor(ts("2024-04-06T15:59:59Z"), "getHours", "+11:00"))).toBe(2n);
    expect(ok(timestampAccessor(ts("2024-04-06T16:00:00Z"), "getHours", "+11:00"))).toBe(3n);
  });

  it("uses a zone's historical offset, to the second", () => {
    // Before 1883 New York kept local mean time, 4:56:02 behind UTC.
    expect(fields(ts("1850-01-01T00:00:00Z"), "America/New_York")).toMatchObject({
      getFullYear: 1849n,
      getMonth: 11n,
      getDate: 31n,
      getHours: 19n,
      getMinutes: 3n,
      getSeconds: 58n,
    });
  });

  it("takes UTC, the empty name and other zone names", () => {
    const t = ts("2009-02-13T23:31:30Z");
    expect(ok(timestampAccessor(t, "getHours", "UTC"))).toBe(23n);
    expect(ok(timestampAccessor(t, "getHours", ""))).toBe(23n);
    expect(ok(timestampAccessor(t, "getHours", "Etc/GMT+5"))).toBe(18n);
    expect(ok(timestampAccessor(t, "getMinutes", "Asia/Kathmandu"))).toBe(16n);
    expect(ok(timestampAccessor(t, "getHours", "US/Central"))).toBe(17n);
  });

  it("names a zone it does not know", () => {
    const t = ts("2009-02-13T23:31:30Z");
    expect(errorOf(timestampAccessor(t, "getHours", "Mars/Olympus_Mons"))).toBe(
      "unknown time zone Mars/Olympus_Mons",
    );
    expect(errorOf(timestampAccessor(t, "getHours", "Local"))).toBe("unknown time zone Local");
    // An offset without a colon is not an offset to cel-go, and no zone name either.
    expect(errorOf(timestampAccessor(t, "getHours", "+0500"))).toBe("unknown time zone +0500");
    expect(errorOf(timestampAccessor(t, "getMilliseconds", "Nowhere"))).toBe("unknown time zone Nowhere");
  });
});

describe("durationAccessor", () => {
  const get = (s: string) => ({
    hours: durationAccessor(dur(s), "getHours"),
    minutes: durationAccessor(dur(s), "getMinutes"),
    seconds: durationAccessor(dur(s), "getSeconds"),
    milliseconds: durationAccessor(dur(s), "getMilliseconds"),
  });

  it("gives whole hours, minutes and seconds, truncated, and the milliseconds component", () => {
    expect(get("3730.5s")).toEqual({ hours: 1n, minutes: 62n, seconds: 3730n, milliseconds: 500n });
    expect(get("1h59m59.999999999s")).toEqual({
      hours: 1n,
      minutes: 119n,
      seconds: 7199n,
      milliseconds: 999n,
    });
    expect(get("0.000999999s")).toEqual({ hours: 0n, minutes: 0n, seconds: 0n, milliseconds: 0n });
    expect(get("123.321456789s").milliseconds).toBe(321n);
  });

  it("truncates toward zero for negative durations", () => {
    expect(get("-1.5s")).toEqual({ hours: 0n, minutes: 0n, seconds: -1n, milliseconds: -500n });
    expect(get("-3730s")).toEqual({ hours: -1n, minutes: -62n, seconds: -3730n, milliseconds: 0n });
  });

  it("is exact at the ends of the range", () => {
    expect(get("9223372036854775807ns")).toEqual({
      hours: 2_562_047n,
      minutes: 153_722_867n,
      seconds: 9_223_372_036n,
      milliseconds: 854n,
    });
    expect(get("-9223372036854775808ns")).toEqual({
      hours: -2_562_047n,
      minutes: -153_722_867n,
      seconds: -9_223_372_036n,
      milliseconds: -854n,
    });
  });
});
