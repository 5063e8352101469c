/** Timestamp and duration accessors, each timestamp accessor with an optional time-zone argument. */
import type { FunctionDecl } from "../env.js";
import { durationAccessor, type TimestampField, timestampAccessor } from "../runtime/time.js";
import type { Duration, Timestamp } from "../runtime/values.js";
import { T } from "../types.js";
import { fn, member } from "./declare.js";

const TIMESTAMP_FIELDS: readonly TimestampField[] = [
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
];
const DURATION_FIELDS = ["getHours", "getMinutes", "getSeconds", "getMilliseconds"] as const;

const snake = (name: string) =>
  name
    .replace(/^get/, "")
    .replace(/[A-Z]/g, (c, i) => (i === 0 ? c : `_${c}`))
    .toLowerCase();

export const timeFunctions: readonly FunctionDecl[] = TIMESTAMP_FIELDS.map((field) => {
  const id = snake(field);
  const overloads = [
    member(`timestamp_to_${id}`, [T.timestamp], T.int, (t: Timestamp) => timestampAccessor(t, field)),
    member(`timestamp_to_${id}_with_tz`, [T.timestamp, T.string], T.int, (t: Timestamp, zone: string) =>
      timestampAccessor(t, field, zone),
    ),
  ];
  const durationField = DURATION_FIELDS.find((d) => d === field);
  if (durationField !== undefined) {
    overloads.push(
      member(`duration_to_${id}`, [T.duration], T.int, (d: Duration) => durationAccessor(d, durationField)),
    );
  }
  return fn(field, ...overloads);
});
