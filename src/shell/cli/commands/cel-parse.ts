/**
 * `harness cel parse <expr>`: runs the CEL front end on one expression and prints its canonical form,
 * or its errors with carets.
 */
import { parse, print, renderDiagnostics } from "../../../cel/index.js";
import { EXIT, type Io } from "../io.js";

export function runCelParse(expr: string, options: { readonly json?: boolean | undefined }, io: Io): number {
  const json = options.json === true;
  const result = parse(expr);
  if (result.ok) {
    const canonical = print(result.ast);
    io.out(json ? JSON.stringify({ ok: true, canonical }) : canonical);
    return EXIT.ok;
  }
  if (json) {
    const errors = result.errors.map((d) => ({
      code: d.code,
      message: d.message,
      ...result.source.location(d.offset),
    }));
    io.out(JSON.stringify({ ok: false, errors }));
  } else io.err(renderDiagnostics(result.source, result.errors));
  return EXIT.failed;
}
