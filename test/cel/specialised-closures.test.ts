/**
 * The compiler's specialised closures (a field read in place, a string test on a loop variable or in
 * a quantifier's own loop, int ordering on bigints, `!` without a call) against the outcomes the
 * general closures gave before they existed: the value or error, the cost, and under each limit below
 * it, the cost at which it stopped. Host values of the wrong type and non-bigint results of int-typed
 * functions take the general path.
 */
import { describe, expect, it } from "vitest";
import { type Activation, compile, standardEnv, T, type Value } from "../../src/cel/index.js";

const env = standardEnv.extend({
  variables: [
    { name: "event", type: T.object("Ev") },
    { name: "l", type: T.list(T.string) },
    { name: "m", type: T.map(T.string, T.string) },
  ],
  objectTypes: [
    {
      name: "Ev",
      fields: {
        s: { type: T.string },
        b: { type: T.bool },
        d: { type: T.double },
        i: { type: T.int },
        paths: { type: T.list(T.string) },
      },
    },
  ],
  functions: [
    {
      name: "half",
      // An int-typed function that answers a double: ordering must fall back to the library's.
      overloads: [{ id: "half_int", params: [T.int], result: T.int, impl: (x) => Number(x) / 2 }],
    },
    {
      name: "tenth",
      // A fractional cost: a loop's steps after it are charged part by part, as always.
      overloads: [
        { id: "tenth_bool", params: [T.bool], result: T.bool, impl: (x) => x, cost: { fixed: 0.1 } },
      ],
    },
  ],
});

type Row = [string, Activation, "value" | "error", Value | string, number, (number | string)[]];

const ROWS: Row[] = [
  ['event.s == "x"', { event: { s: "x" } }, "value", true, 3, [2, 2, 3]],
  ['event.s == "x"', { event: { s: 1 } }, "error", "host value of type number is not a string", 2, [2, 2]],
  ['event.s == "x"', { event: { s: null } }, "value", false, 2, [2, 2]],
  ['event.s == "x"', { event: {} }, "value", false, 2, [2, 2]],
  [
    'event.s == "x"',
    { event: "notobj" },
    "error",
    "host value of type string is not an object (variable event)",
    2,
    [2, 2],
  ],
  ['event.s == "x"', { event: undefined }, "value", false, 2, [2, 2]],
  ['event.s == "collision_started"', { event: { s: "collision_started" } }, "value", true, 4, [2, 2, 4, 4]],
  ['event.s == "collision_started"', { event: { s: "collision_startex" } }, "value", false, 4, [2, 2, 4, 4]],
  ['event.s == "collision_started"', { event: { s: "" } }, "value", false, 2, [2, 2]],
  ['event.s == "collision_started"', { event: { s: "short" } }, "value", false, 3, [2, 2, 3]],
  [
    'event.s == "collision_started"',
    { event: { s: 5 } },
    "error",
    "host value of type number is not a string",
    2,
    [2, 2],
  ],
  ["event.s != string(123456789012)", { event: { s: "123456789012" } }, "value", false, 5, [2, 2, 3, 5, 5]],
  ["event.s != string(123456789012)", { event: { s: "x" } }, "value", true, 4, [2, 2, 3, 4]],
  ["event.s != string(123456789012)", { event: {} }, "value", true, 3, [2, 2, 3]],
  ['event.s == string(1) || event.s == ""', { event: { s: "1" } }, "value", true, 4, [2, 2, 4, 4]],
  ['event.s == string(1) || event.s == ""', { event: { s: "" } }, "value", true, 5, [2, 2, 3, 5, 5]],
  ['event.s == string(1) || event.s == ""', { event: { s: "2" } }, "value", false, 6, [2, 2, 4, 4, 6, 6]],
  [
    'tenth(true) && event.paths.exists(p, p.endsWith("c"))',
    { event: { paths: ["a", "b", "c"] } },
    "value",
    true,
    21.1,
    [
      0.1, 2.1, 2.1, 6.1, 6.1, 6.1, 6.1, 7.1, 8.1, 12.1, 12.1, 12.1, 12.1, 13.1, 14.1, 18.1, 18.1, 18.1, 18.1,
      19.1, 20.1, 21.1,
    ],
  ],
  ["event.b", { event: { b: true } }, "value", true, 2, [2, 2]],
  ["event.b", { event: { b: "true" } }, "error", "host value of type string is not a bool", 2, [2, 2]],
  ["event.b", { event: {} }, "value", false, 2, [2, 2]],
  [
    "event.b",
    { event: 7 },
    "error",
    "host value of type number is not an object (variable event)",
    2,
    [2, 2],
  ],
  ["event.d > 1.0", { event: { d: 1.5 } }, "value", true, 3, [2, 2, 3]],
  ["event.d > 1.0", { event: { d: "x" } }, "error", "host value of type string is not a double", 2, [2, 2]],
  ["event.d > 1.0", { event: { d: 1n } }, "error", "host value of type bigint is not a double", 2, [2, 2]],
  ["event.d > 1.0", { event: {} }, "value", false, 3, [2, 2, 3]],
  ["event.i >= 2", { event: { i: 3 } }, "value", true, 3, [2, 2, 3]],
  ["event.i >= 2", { event: { i: 3n } }, "value", true, 3, [2, 2, 3]],
  ["event.i >= 2", { event: { i: "3" } }, "error", "host value of type string is not a int", 2, [2, 2]],
  ["event.i >= 2", { event: { i: 2.5 } }, "error", "host value of type number is not a int", 2, [2, 2]],
  ["event.i >= 2", { event: {} }, "value", false, 3, [2, 2, 3]],
  ["half(event.i) >= 2", { event: { i: 5 } }, "value", true, 4, [2, 2, 3, 4]],
  ["half(event.i) >= 2", { event: { i: 3 } }, "value", false, 4, [2, 2, 3, 4]],
  [
    "half(event.i) < 2 && 1 <= event.i && event.i > 0",
    { event: { i: 3 } },
    "value",
    true,
    10,
    [2, 2, 3, 4, 6, 6, 7, 9, 9, 10],
  ],
  ["half(event.i) < 2 && 1 <= event.i && event.i > 0", { event: { i: 5 } }, "value", false, 4, [2, 2, 3, 4]],
  [
    'event.paths.exists(p, p.startsWith("a"))',
    { event: { paths: ["b", "ab", "a"] } },
    "value",
    true,
    18,
    [2, 2, 6, 6, 6, 6, 7, 8, 12, 12, 12, 12, 13, 14, 17, 17, 17, 18],
  ],
  [
    'event.paths.exists(p, p.startsWith("a"))',
    { event: { paths: ["b", 1] } },
    "error",
    "host value of type number is not a string list element",
    2,
    [2, 2],
  ],
  [
    'event.paths.exists(p, p.startsWith("a"))',
    { event: { paths: "a" } },
    "error",
    "host value of type string is not a list",
    2,
    [2, 2],
  ],
  ['event.paths.exists(p, p.startsWith("a"))', { event: {} }, "value", false, 3, [2, 2, 3]],
  [
    'event.paths.all(p, !p.endsWith("a"))',
    { event: { paths: ["b", "ba"] } },
    "value",
    false,
    15,
    [2, 2, 5, 5, 5, 6, 7, 8, 11, 11, 11, 12, 13, 14, 15],
  ],
  ['event.paths.all(p, !p.endsWith("a"))', { event: { paths: [] } }, "value", true, 3, [2, 2, 3]],
  [
    'l.exists(p, p.endsWith("a") || p.startsWith("b"))',
    { l: ["xa", "b"], m: { k1: "a", x: "b" } },
    "value",
    true,
    11,
    [1, 5, 5, 5, 5, 6, 7, 10, 10, 10, 11],
  ],
  [
    'm.all(k, k.startsWith("k"))',
    { l: ["xa", "b"], m: { k1: "a", x: "b" } },
    "value",
    false,
    12,
    [1, 4, 4, 4, 5, 6, 9, 9, 9, 10, 11, 12],
  ],
  [
    'l.all(a, l.exists(b, a.startsWith("x")))',
    { l: ["xa", "b"], m: { k1: "a", x: "b" } },
    "value",
    false,
    33,
    [
      1, 4, 4, 4, 5, 9, 9, 9, 9, 10, 11, 14, 14, 14, 15, 18, 18, 18, 19, 23, 23, 23, 23, 24, 25, 29, 29, 29,
      29, 30, 31, 32, 33,
    ],
  ],
  [
    'l.exists(p, !(p.endsWith("a")))',
    { l: ["xa", "b"], m: { k1: "a", x: "b" } },
    "value",
    true,
    16,
    [1, 5, 5, 5, 5, 6, 7, 8, 12, 12, 12, 12, 13, 14, 15, 16],
  ],
  [
    'event.paths.exists(p, p.startsWith("internal/") && !p.endsWith("_test.go"))',
    { event: { paths: ["internal/a_test.go", "internal/b.go"] } },
    "value",
    true,
    21,
    [2, 2, 6, 6, 6, 6, 7, 8, 9, 10, 11, 15, 15, 15, 15, 16, 17, 18, 19, 20, 21],
  ],
  [
    '!event.b || event.s != "" && event.s.startsWith("x")',
    { event: { b: true, s: "xy" } },
    "value",
    true,
    8,
    [2, 2, 3, 5, 5, 7, 7, 8],
  ],
  [
    '!event.b || event.s != "" && event.s.startsWith("x")',
    { event: { b: true, s: "" } },
    "value",
    false,
    5,
    [2, 2, 3, 5, 5],
  ],
  [
    '!event.b || event.s != "" && event.s.startsWith("x")',
    { event: { b: "no" } },
    "error",
    "host value of type string is not a bool",
    4,
    [2, 2, 4, 4],
  ],
];

// A computed string (an index, a loop variable) against a constant, short or long, computed or not:
// pinned from the compiler before its constant equality was shared with the field test's.
ROWS.push(
  ['l[0] == "collision_started"', { l: ["collision_started"] }, "value", true, 4, [1, 2, 4, 4]],
  ['l[0] != "collision_started"', { l: ["collision_startex"] }, "value", true, 4, [1, 2, 4, 4]],
  ['l[0] == "collision" + "_started"', { l: ["collision_started"] }, "value", true, 6, [1, 2, 4, 4, 6, 6]],
  ['l[0] == "collision" + "_started"', { l: [""] }, "value", false, 4, [1, 2, 4, 4]],
  [
    'l.exists(p, p == "internal/store/store.go")',
    { l: ["cmd/main.go", "internal/store/store.go"] },
    "value",
    true,
    17,
    [1, 5, 5, 5, 5, 6, 8, 8, 12, 12, 12, 12, 13, 16, 16, 16, 17],
  ],
  [
    'l.exists(p, p == "internal/store/store.go")',
    { l: ["😀".repeat(12), "internal/store/store.gp"] },
    "value",
    false,
    17,
    [1, 5, 5, 5, 5, 6, 8, 8, 12, 12, 12, 12, 13, 16, 16, 16, 17],
  ],
);

describe("specialised closures give what the general ones gave", () => {
  it.each(ROWS)("%s, case %#", (text, vars, kind, want, cost, under) => {
    const c = compile(text, env);
    if (!c.ok) throw new Error(`${text} did not compile`);
    const r = c.program.evaluate(vars);
    expect([r.kind, r.kind === "error" ? r.error.message : r.kind === "value" ? r.value : r.kind]).toEqual([
      kind,
      want,
    ]);
    expect(r.cost).toBe(cost);
    const stops = [...Array(Math.ceil(cost)).keys()].map((limit) => {
      const x = c.program.evaluate(vars, limit);
      return x.kind === "cost_exceeded" ? x.cost : x.kind;
    });
    expect(stops).toEqual(under);
  });
});
