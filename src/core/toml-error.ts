/**
 * The one wording of a TOML syntax error, for rule files, the config and rule tests alike: smol-toml's
 * first line, except where it misleads. A basic string left open runs into its line's end, which
 * smol-toml reports as a control character in the string; the author needs to hear "unterminated".
 */
import { TomlError } from "smol-toml";

export function tomlErrorMessage(e: unknown, text: string): string {
  const first = (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
  if (e instanceof TomlError && /control characters are not allowed in strings/.test(first)) {
    const line = text.split("\n")[e.line - 1] ?? "";
    // Past the last character of its line: the line break itself is the "control character".
    if (e.column > line.replace(/\r$/, "").length)
      return "invalid TOML: unterminated string: a quoted string must end on the line it starts (use ''' or \"\"\" for a string of several lines)";
  }
  return `invalid TOML: ${first}`;
}
