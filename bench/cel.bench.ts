/**
 * `npm run bench` (its second step): compile time (parse + check + compile) and evaluation time per
 * expression, for the six starter-rule `when` expressions (the windowed primitives bound to constant
 * functions) and typical filters over `paths`, measured side by side in one run:
 *
 * - ours (closures that meter their cost),
 * - @marcbachmann/cel-js and @bufbuild/cel (benchmark-only dev dependencies),
 * - a hand-built closure tree with CEL's semantics and no cost metering: the floor.
 *
 * Each gets the event in the form it reads fastest, made once outside the timed loop: ours laid out in
 * its type's layout, as the rules core decodes a row once for all its rules (the `decode` column is
 * that decode, paid once per row, not per rule); @marcbachmann/cel-js as an instance of the class of
 * its registered `Event` type (`cel-contenders.ts` says why); @bufbuild/cel as the Map its evaluator
 * takes. The floor reads the plain object the journal gives.
 */
import { parse as bufParse, plan as bufPlan } from "@bufbuild/cel";
import { compile, type Layout, layoutOf, type Program, T } from "../src/cel/index.js";
import {
  bufEnv,
  EVAL_BATCH,
  eventFor,
  eventType,
  expressions,
  Fault,
  FLOOR,
  type Fn,
  MarcEvent,
  marc,
  now,
  ours,
} from "./cel-contenders.js";
import { type Measurement, measureSideBySide } from "./measure.js";

const layout = layoutOf(eventType.fields) as Layout;
const ns = (n: number) => n.toFixed(0).padStart(7);
const us = (n: number) => (n / 1000).toFixed(1).padStart(6);
console.log(`node ${process.version}; medians of 31 samples; ns/op for evaluation, µs for compile`);
console.log(
  `${"expression".padEnd(28)} ${"ours".padStart(7)} ${"marc".padStart(7)} ${"buf".padStart(7)} ${"floor".padStart(7)} ${"no-op".padStart(6)} ${"decode".padStart(6)}  marc/ours  ours/floor | compile µs: ${"ours".padStart(6)} ${"marc".padStart(6)} ${"buf".padStart(6)}`,
);
// A first pass warms the JIT and the shared code paths of every contender; only the second is printed.
for (const pass of [1, 2]) {
  for (const { name, when } of expressions) {
    const compiled = compile(when, ours, { resultType: T.bool });
    if (!compiled.ok) throw new Error(`${name}: ${compiled.errors[0]?.message}`);
    const program = compiled.program;
    const event = eventFor(name);
    const vars = { event: layout.layOut(event), now };
    const check = program.evaluate(vars, 5000);
    if (check.kind !== "value") throw new Error(`${name}: ${check.kind}`);
    const marcExpr = marc.parse(when);
    const marcVars = { event: new MarcEvent(event), now: new Date(Number(now.nanos / 1_000_000n)) };
    const floor = FLOOR[name] as Fn;
    // Every contender must reach the same answer, or the timings compare different work.
    const answers = [marcExpr(marcVars), floor(event)];
    if (answers.some((a) => a !== check.value))
      throw new Error(`${name}: answers differ: ${check.value}, ${answers}`);
    if (pass === 1) sameSemantics(name, program, floor, event);
    const bufProgram = bufPlan(bufEnv, bufParse(when));
    const bufVars = { event: new Map(Object.entries(event).map(([k, v]) => [k, v])), now: undefined };
    const [evalOurs, evalMarc, evalBuf, evalFloor, evalNoop] = measureSideBySide(
      [
        () => program.evaluate(vars, 5000),
        () => marcExpr(marcVars),
        () => bufProgram(bufVars as never),
        () => floor(event),
        () => undefined,
      ],
      { batch: EVAL_BATCH },
    ) as [Measurement, Measurement, Measurement, Measurement, Measurement];
    // Apart: the decode's garbage would otherwise be collected inside the contenders' timings.
    const [decode] = measureSideBySide([() => layout.layOut(event)], { batch: EVAL_BATCH }) as [Measurement];
    const [compileOurs, compileMarc, compileBuf] = measureSideBySide(
      [
        () => compile(when, ours, { resultType: T.bool }),
        () => marc.parse(when),
        () => bufPlan(bufEnv, bufParse(when)),
      ],
      { batch: 20, warmup: 300 },
    ) as [Measurement, Measurement, Measurement];
    if (pass === 1) continue;
    console.log(
      `${name.padEnd(28)} ${ns(evalOurs.medianNs)} ${ns(evalMarc.medianNs)} ${ns(evalBuf.medianNs)} ${ns(evalFloor.medianNs)} ${ns(evalNoop.medianNs).slice(1)} ${ns(decode.medianNs).slice(1)}  ${(evalMarc.medianNs / evalOurs.medianNs).toFixed(1).padStart(8)}x ${(evalOurs.medianNs / evalFloor.medianNs).toFixed(1).padStart(9)}x |             ${us(compileOurs.medianNs)} ${us(compileMarc.medianNs)} ${us(compileBuf.medianNs)}`,
    );
  }
}

/**
 * The floor is a floor only if it does what CEL does: on the event with each field unset in turn, and
 * with each holding a value of another type, ours and the floor must give the same bool or both an error.
 */
function sameSemantics(name: string, program: Program, floor: Fn, event: Record<string, unknown>): void {
  const variants = Object.keys(event).flatMap((k) => [
    { ...event, [k]: undefined },
    { ...event, [k]: 7 },
    { ...event, [k]: [7] },
  ]);
  for (const v of variants) {
    const r = program.evaluate({ event: layout.layOut(v), now }, 5000);
    const ourAnswer = r.kind === "value" ? r.value : r.kind;
    const floorAnswer = floor(v as never);
    const floorKind = floorAnswer instanceof Fault ? "error" : floorAnswer;
    if (ourAnswer !== floorKind)
      throw new Error(
        `${name}: the floor answers ${floorKind} where ours ${ourAnswer}: ${JSON.stringify(v)}`,
      );
  }
}
