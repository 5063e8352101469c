import { parse, print, renderDiagnostics } from "../src/cel/index.js";
for (const s of process.argv.slice(2)) {
  const r = parse(s);
  if (r.ok) console.log(print(r.ast)); else console.log(renderDiagnostics(r.source, r.errors));
}
