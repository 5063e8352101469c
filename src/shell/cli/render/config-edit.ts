/**
 * An edit of the global config that a command prints for the operator to make (REQ-10: no command
 * writes `enforce`; `harness policy init` and `harness rules enforce` say the lines and where they go).
 * The first line names the file and the place; the lines to write follow, between blank lines, so they
 * can be copied as they stand.
 */
import { scanPositions } from "../../config/toml-positions.js";

export type ConfigEdit =
  | { readonly kind: "append"; readonly file: string; readonly lines: readonly string[] }
  /** Below the header of `[table]`, which stands on `line`. */
  | {
      readonly kind: "under";
      readonly file: string;
      readonly table: string;
      readonly line: number | undefined;
      readonly lines: readonly string[];
    }
  /** In place of the key `key`, which starts on `line`. */
  | {
      readonly kind: "replace";
      readonly file: string;
      readonly key: string;
      readonly line: number;
      readonly lines: readonly string[];
    };

export function editText(e: ConfigEdit): string[] {
  const head =
    e.kind === "append"
      ? `add to ${e.file}:`
      : e.kind === "under"
        ? `add under [${e.table}]${e.line === undefined ? "" : ` (line ${e.line})`} in ${e.file}:`
        : `in ${e.file}, replace ${e.key} (line ${e.line}) with:`;
  return [head, "", ...e.lines, ""];
}

/**
 * Where `key` of `[table]` goes in `text`: in place of the key when it is written, under the table's
 * header when the table is, else at the end with the header.
 */
export function keyEdit(
  file: string,
  text: string,
  table: readonly string[],
  key: string,
  line: string,
): ConfigEdit {
  const positions = scanPositions(text);
  const at = positions.of([...table, key]);
  if (at !== undefined) return { kind: "replace", file, key, line: at.line, lines: [line] };
  const header = positions.of(table);
  const name = table.join(".");
  if (header !== undefined) return { kind: "under", file, table: name, line: header.line, lines: [line] };
  return { kind: "append", file, lines: [`[${name}]`, line] };
}
