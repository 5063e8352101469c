/**
 * `harness cel parse <expr>`: runs the CEL front end on one expression and prints its canonical form,
 * or its errors with carets. Until the daemon exists this is the main job a new user can run.
 */
import { parse, print, renderDiagnostics } from "../../../cel/index.js";

export interface CommandOutput {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function celParseCommand(expr: string, json: boolean): CommandOutput {
  const result = parse(expr);
  if (result.ok) {
    const canonical = print(result.ast);
    return { exitCode: 0, stdout: json ? JSON.stringify({ ok: true, canonical }) : canonical, stderr: "" };
  }
  if (json) {
    const errors = result.errors.map((d) => ({
      code: d.code,
      message: d.message,
      ...result.source.location(d.offset),
    }));
    return { exitCode: 1, stdout: JSON.stringify({ ok: false, errors }), stderr: "" };
  }
  return { exitCode: 1, stdout: "", stderr: renderDiagnostics(result.source, result.errors) };
}
