/** Positions of a TOML document's `[[name]]` headers, which the config scanner keeps only the first of. */
import type { Position } from "../config/toml-positions.js";

/**
 * Where each `[[name]]` header stands, in file order. A line-wise scan: its count is compared with
 * the parsed array's, and positions are used only when they agree.
 */
export function arrayTableHeaders(text: string, name: string): Position[] {
  const re = new RegExp(`^[ \\t]*\\[\\[[ \\t]*${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[ \\t]*\\]\\]`);
  const out: Position[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    const m = re.exec(line);
    if (m !== null) out.push({ line: i + 1, column: line.indexOf("[") + 1 });
  });
  return out;
}
