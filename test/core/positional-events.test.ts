/**
 * Positional events (issue 21): the activation decodes a row's event into its kind's layout, and a
 * rule reads `event.f` from its slot. Over every kind and every field, set, unset, null and of the
 * wrong type, `has(event.f)`, a read of the field (its zero value when unset) and a field used whole
 * answer exactly as the same event given as a plain object, which is how they were read before: the
 * same value or error, the same cost, and under every lower limit the same point of `cost_exceeded`.
 */
import { describe, expect, it } from "vitest";
import { type Activation, compile, type Evaluation, Layout, type Type } from "../../src/cel/index.js";
import { ENVIRONMENTS } from "../../src/core/environments.js";
import { EVENT_FIELDS, EVENT_KINDS, EVENT_LAYOUTS, type EventKind } from "../../src/core/kinds.js";

/** A value of the field's declared type, as the journal carries it. */
function sample(type: Type): unknown {
  switch (type.kind) {
    case "string":
      return "x";
    case "bool":
      return true;
    case "int":
      return 3;
    case "timestamp":
      return 1_800_000_000_000;
    case "list":
      return ["a/b.go", "c.go"];
    default:
      throw new Error(`no sample for ${type.kind}`);
  }
}

/** A value no field of the type holds: a read of it is an error. */
const wrongFor = (type: Type): unknown => (type.kind === "string" ? 7 : "seven");

const CASES: readonly [string, (type: Type) => unknown][] = [
  ["unset", () => undefined],
  ["null", () => null],
  ["set", sample],
  ["of the wrong type", wrongFor],
];

function evaluateAll(kind: EventKind, text: string, vars: Activation): Evaluation[] {
  const compiled = compile(text, ENVIRONMENTS[kind]);
  if (!compiled.ok) throw new Error(`${text}: ${compiled.errors[0]?.message}`);
  const program = compiled.program;
  const full = program.evaluate(vars);
  const under = Array.from({ length: Math.ceil(full.cost) + 1 }, (_, limit) => program.evaluate(vars, limit));
  return [full, ...under];
}

/** An evaluation with its error as its message: two errors made separately are equal by what they say. */
const comparable = (e: Evaluation) => (e.kind === "error" ? { ...e, error: e.error.message } : e);

describe("positional events answer as plain ones", () => {
  for (const kind of EVENT_KINDS) {
    const layout = EVENT_LAYOUTS[kind];
    it(`${kind}: the layout holds every declared field, in order`, () => {
      expect(layout.names).toEqual(Object.keys(EVENT_FIELDS[kind]));
    });
    for (const [field, spec] of Object.entries(EVENT_FIELDS[kind])) {
      for (const [how, value] of CASES) {
        it(`${kind}.${field} ${how}: has(), the read, its zero and the event whole`, () => {
          const v = value(spec.type);
          const event: Record<string, unknown> = { type: "tool" };
          if (field !== "type" || v !== undefined) event[field] = v;
          if (field === "type" && v === undefined) delete event.type;
          const plain = { event, now: 1_800_000_000_000 };
          const laidOut = { event: layout.layOut(event), now: 1_800_000_000_000 };
          for (const text of [
            `has(event.${field})`,
            `event.${field}`,
            `has(event.${field}) ? event.${field} : event.${field}`,
            `[event.${field}, event.${field}]`,
            `type(event.${field})`,
            `dyn(event).${field}`,
            `has(dyn(event).${field})`,
            `[event][0].${field}`,
            ...(spec.type.kind === "string"
              ? [`event.${field} == "x" || event.${field} != "a longer constant than ten"`]
              : []),
          ]) {
            const want = evaluateAll(kind, text, plain).map(comparable);
            const got = evaluateAll(kind, text, laidOut).map(comparable);
            expect(got, text).toEqual(want);
          }
        });
      }
    }
  }

  it("a field of a kind's event laid out in another kind's layout is read by name", () => {
    const event = { type: "edge_added", edge: "edited" };
    const wrongLayout = { event: EVENT_LAYOUTS.run_event.layOut(event), now: 0 };
    const right = evaluateAll("graph_event", 'event.edge == "edited" && !has(event.path)', wrongLayout);
    const plain = evaluateAll("graph_event", 'event.edge == "edited" && !has(event.path)', { event, now: 0 });
    expect(right.map(comparable)).toEqual(plain.map(comparable));
    expect(right[0]).toMatchObject({ kind: "value", value: true });
  });
});

describe("a laid-out event is read from its slots", () => {
  it("reads and has() answer from the decode, not the object it came from", () => {
    const event: Record<string, unknown> = { type: "tool", action: "verify" };
    const laidOut = EVENT_LAYOUTS.run_event.layOut(event);
    event.action = "changed";
    event.tool = "set later";
    const r = evaluateAll("run_event", 'event.action == "verify" && !has(event.tool)', {
      event: laidOut,
      now: 0,
    });
    expect(r[0]).toMatchObject({ kind: "value", value: true });
  });
});

describe("decoding remembers the last key order", () => {
  it("decodes objects of other key orders and key sets as a fresh layout does", () => {
    const layout = EVENT_LAYOUTS.run_event;
    const sequence: Record<string, unknown>[] = [
      { type: "tool", action: "verify", repo: "r", is_error: true },
      { type: "tool", action: "verify", repo: "r", is_error: true },
      { action: "edit", type: "tool", extra: 1, repo: null },
      { type: "closed", harness: "h", outcome: "failed", cause_digest: "d", exit_code: 2 },
      { type: "closed" },
      { zz: 1, type: "tool", paths: ["a"], at: 5 },
    ];
    for (const event of sequence) {
      const fresh = new Layout(layout.names, layout.zeros).layOut(event);
      const got = layout.layOut(event);
      expect([got.values, got.present]).toEqual([fresh.values, fresh.present]);
    }
  });
});
