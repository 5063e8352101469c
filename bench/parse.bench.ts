/**
 * `npm run bench`: parse time per starter-rule `when` expression, median of 31 samples, and the time to
 * print the canonical form (what a content hash costs beyond the parse).
 */
import { parseOrThrow, print } from "../src/cel/index.js";
import { measure } from "./measure.js";
import { starterExpressions } from "./starter-expressions.js";

const rows = starterExpressions().map(({ name, when }) => {
  const ast = parseOrThrow(when);
  const parse = measure(() => parseOrThrow(when));
  const printed = measure(() => print(ast));
  return { name, chars: when.length, parse, printed };
});

const us = (ns: number) => (ns / 1000).toFixed(1).padStart(7);
console.log(`node ${process.version}, ${new Date().toISOString()}`);
console.log(`${"expression".padEnd(28)} chars  parse µs (p10–p90)       print µs`);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(28)} ${String(r.chars).padStart(5)}  ${us(r.parse.medianNs)} (${us(r.parse.p10Ns).trim()}–${us(r.parse.p90Ns).trim()})  ${us(r.printed.medianNs)}`,
  );
}
