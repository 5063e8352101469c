import type { Source } from "./source.js";

/**
 * One problem found in an expression, pointing at an offset of its source.
 *
 * `code` names the kind of problem for programs (tests, the rules core's reason mapping); `message` is
 * for people.
 */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly message: string;
  /** UTF-16 offset into the source text. */
  readonly offset: number;
}

export type DiagnosticCode =
  | "syntax"
  | "invalid_literal"
  | "invalid_escape"
  | "unterminated_string"
  | "reserved_identifier"
  | "unsupported_syntax"
  | "macro"
  | "depth_limit"
  | "size_limit"
  | "check"
  | "validation";

/**
 * Renders diagnostics the way the CEL reference implementation does:
 *
 *     ERROR: <input>:1:12: undefined field 'outcom'
 *      | event.outcom == "failed"
 *      | ......^
 */
export function renderDiagnostics(source: Source, diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map((d) => renderDiagnostic(source, d)).join("\n");
}

export function renderDiagnostic(source: Source, d: Diagnostic): string {
  const { line, column } = source.location(d.offset);
  let out = `ERROR: ${source.description}:${line}:${column}: ${d.message}`;
  const text = source.line(line);
  if (text !== undefined) {
    const shown = text.replace(/\t/g, " ");
    out += `\n | ${shown}\n | ${".".repeat(column - 1)}^`;
  }
  return out;
}

/** Thrown by the public entry points' `OrThrow` variants; carries every diagnostic. */
export class CelSyntaxError extends Error {
  readonly diagnostics: readonly Diagnostic[];
  readonly source: Source;

  constructor(source: Source, diagnostics: readonly Diagnostic[]) {
    super(renderDiagnostics(source, diagnostics));
    this.name = "CelSyntaxError";
    this.source = source;
    this.diagnostics = diagnostics;
  }
}
