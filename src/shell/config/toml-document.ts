/** Parsing one config file: smol-toml for the values, a scan of the source for the positions. */
import { parse as parseToml, TomlError } from "smol-toml";
import { tomlErrorMessage } from "../../core/toml-error.js";
import type { ConfigError } from "./config-error.js";
import { scanPositions, type TomlPositions } from "./toml-positions.js";

export type TomlTable = Record<string, unknown>;

export type TomlDocument =
  | { readonly ok: true; readonly doc: TomlTable; readonly positions: TomlPositions }
  | { readonly ok: false; readonly error: ConfigError };

export function parseTomlDocument(text: string, file: string): TomlDocument {
  try {
    return { ok: true, doc: parseToml(text), positions: scanPositions(text) };
  } catch (e) {
    const message = tomlErrorMessage(e, text);
    return {
      ok: false,
      error:
        e instanceof TomlError
          ? { code: "syntax", file, line: e.line, column: e.column, message }
          : { code: "syntax", file, message },
    };
  }
}

/** A TOML table: smol-toml gives tables as plain objects, arrays as arrays and dates as `Date`s. */
export const isTable = (v: unknown): v is TomlTable =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Reads a file's bytes as UTF-8, refusing invalid sequences rather than replacing them. */
export function decodeUtf8(bytes: Uint8Array, file: string): { text: string } | { error: ConfigError } {
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { error: { code: "syntax", file, message: "the file is not valid UTF-8" } };
  }
}
