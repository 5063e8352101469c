/** JSON Lines input, one value a line with its 1-based number; a line that is not JSON is reported, not thrown. */
import * as readline from "node:readline";

export type Line =
  | { readonly n: number; readonly value: unknown }
  | { readonly n: number; readonly error: string };

export async function* jsonLines(input: NodeJS.ReadableStream): AsyncGenerator<Line> {
  let n = 0;
  for await (const text of readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    n++;
    if (text.trim() === "") continue;
    try {
      yield { n, value: JSON.parse(text) as unknown };
    } catch (e) {
      yield { n, error: `not JSON: ${(e as Error).message}` };
    }
  }
}
