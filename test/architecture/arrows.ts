/**
 * The import graph against the table of `layers.ts`: imports that run up the layers or enter CEL past its
 * entry, imports between folders of `src/shell` that the table does not list, folders it does not know,
 * and arrows no import uses. Each check returns its findings as lines, empty when the tree keeps the table.
 */
import type { Import } from "./import-graph.js";
import { type Arrow, arrowOf, CEL_ENTRY, LAYERS, type Layer } from "./layers.js";

/** The table's shape: a folder of `src/shell` → the folders it may import. */
export type FolderTable = Readonly<Record<string, readonly (string | Arrow)[]>>;

/** Where a file of `src/` sits: its layer and, in `src/shell`, its folder as the table names it. */
export interface Place {
  readonly layer: Layer;
  readonly folder?: string;
}

const isLayer = (s: string): s is Layer => (LAYERS as readonly string[]).includes(s);

/**
 * A file's place; undefined outside the layers. In `src/shell` a plain file is its own folder, named
 * without `.ts`; a file in a folder the table lists within another (`agents/install`) is in that one.
 */
export function placeOf(file: string, table: FolderTable): Place | undefined {
  const [src, layer, ...rest] = file.split("/");
  if (src !== "src" || layer === undefined || !isLayer(layer) || rest.length === 0) return undefined;
  if (layer !== "shell") return { layer };
  if (rest.length === 1) return { layer, folder: (rest[0] as string).replace(/\.tsx?$/, "") };
  let folder = rest[0] as string;
  for (let depth = 2; depth < rest.length; depth++) {
    const nested = rest.slice(0, depth).join("/");
    if (Object.hasOwn(table, nested)) folder = nested;
  }
  return { layer, folder };
}

const show = (i: Import) => `${i.from} → ${i.to}`;

/** Imports from a layer to one after it (`src/core` → `src/shell`), and into CEL past its entry. */
export function layerViolations(imports: readonly Import[], table: FolderTable): string[] {
  const order = LAYERS.join(" ← ");
  const found: string[] = [];
  for (const i of imports) {
    const from = placeOf(i.from, table);
    const to = placeOf(i.to, table);
    if (from === undefined || to === undefined) continue;
    if (LAYERS.indexOf(to.layer) > LAYERS.indexOf(from.layer))
      found.push(`${show(i)}: src/${from.layer} may not import src/${to.layer} (${order})`);
    else if (to.layer === "cel" && from.layer !== "cel" && i.to !== CEL_ENTRY)
      found.push(`${show(i)}: outside src/cel, CEL is imported through ${CEL_ENTRY}`);
  }
  return found.sort();
}

/** Imports between folders of `src/shell` that the table does not allow. */
export function arrowViolations(imports: readonly Import[], table: FolderTable): string[] {
  const found: string[] = [];
  for (const i of imports) {
    const from = placeOf(i.from, table)?.folder;
    const to = placeOf(i.to, table)?.folder;
    if (from === undefined || to === undefined || from === to) continue;
    const arrows = table[from];
    if (arrows === undefined) {
      found.push(`${show(i)}: ${from} is not in the table`);
      continue;
    }
    const arrow = arrows.map(arrowOf).find((a) => a.to === to);
    if (arrow === undefined) found.push(`${show(i)}: the table has no arrow ${from} → ${to}`);
    else if (arrow.typeOnly && i.kind !== "type-only")
      found.push(`${show(i)}: ${from} may import only ${to}'s types (${i.kind} import)`);
  }
  return found.sort();
}

/** Folders of the tree missing from the table, and the table's folders missing from the tree. */
export function folderMismatches(files: readonly string[], table: FolderTable): string[] {
  const present = new Set(files.flatMap((f) => placeOf(f, table)?.folder ?? []));
  return [
    ...[...present]
      .filter((f) => !Object.hasOwn(table, f))
      .map((f) => `${f}: in src/shell, not in the table`),
    ...Object.keys(table)
      .filter((f) => !present.has(f))
      .map((f) => `${f}: in the table, not in src/shell`),
  ];
}

/** The table's arrows that no import takes: a table that says more than the tree is no longer its map. */
export function unusedArrows(imports: readonly Import[], table: FolderTable): string[] {
  const used = new Set<string>();
  for (const i of imports) {
    const from = placeOf(i.from, table)?.folder;
    const to = placeOf(i.to, table)?.folder;
    if (from !== undefined && to !== undefined) used.add(`${from} → ${to}`);
  }
  return Object.entries(table).flatMap(([from, arrows]) =>
    arrows.map((a) => `${from} → ${arrowOf(a).to}`).filter((arrow) => !used.has(arrow)),
  );
}
