/**
 * ARCHITECTURE.md against the table of `layers.ts`: its layers line, and the "Imports:" sentence that ends
 * each folder's bullet under "## `src/shell`", which must read as the table renders that folder's arrows.
 */
import type { FolderTable } from "./arrows.js";
import { type Arrow, arrowOf, LAYERS } from "./layers.js";

/** A folder's "Imports:" sentence as ARCHITECTURE.md writes it: `to (types: why)` for each arrow. */
export function renderImports(arrows: readonly (string | Arrow)[]): string {
  if (arrows.length === 0) return "Imports nothing else.";
  const render = (a: Arrow) => {
    const notes = [a.typeOnly ? "types" : undefined, a.why].filter((n) => n !== undefined);
    return notes.length === 0 ? a.to : `${a.to} (${notes.join(": ")})`;
  };
  return `Imports: ${arrows.map((a) => render(arrowOf(a))).join(", ")}.`;
}

/** The layers as ARCHITECTURE.md draws them: `src/cel` ← `src/core` ← `src/shell`. */
export const layersLine = (): string => LAYERS.map((l) => `\`src/${l}\``).join(" ← ");

const SHELL_HEADING = "## `src/shell`";
/** A folder's bullet: "- `rpc/`: …" or "- `errors.ts`: …", the folder named as the table names it. */
const BULLET = /^- `([^`]+?)(?:\/|\.ts)`/;
/** The sentence that ends a bullet: from its first "Imports" to the end of the line. */
const IMPORTS = /\bImports(?:: .*| nothing else\.)$/;

/** Each way ARCHITECTURE.md (as `markdown`) and the table disagree; empty when they agree. */
export function docDisagreements(markdown: string, table: FolderTable): string[] {
  const found: string[] = [];
  if (!markdown.includes(layersLine())) found.push(`the layers line is not ${layersLine()}`);
  const start = markdown.indexOf(SHELL_HEADING);
  if (start < 0) return [...found, `no "${SHELL_HEADING}" section`];
  const end = markdown.indexOf("\n## ", start + SHELL_HEADING.length);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const seen = new Set<string>();
  for (const line of section.split("\n")) {
    const folder = BULLET.exec(line)?.[1];
    if (folder === undefined) continue;
    if (seen.has(folder)) found.push(`${folder}: more than one bullet`);
    seen.add(folder);
    const arrows = table[folder];
    if (arrows === undefined) {
      found.push(`${folder}: in ARCHITECTURE.md, not in the table`);
      continue;
    }
    const said = IMPORTS.exec(line)?.[0];
    const want = renderImports(arrows);
    if (said !== want)
      found.push(
        `${folder}: ARCHITECTURE.md says ${JSON.stringify(said ?? "")}, the table ${JSON.stringify(want)}`,
      );
  }
  for (const folder of Object.keys(table))
    if (!seen.has(folder)) found.push(`${folder}: in the table, no bullet in ARCHITECTURE.md`);
  return found;
}
