/** The `when` expressions of the starter pack, read from `starter-rules/`, for benchmarks. */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseToml } from "smol-toml";

export interface NamedExpression {
  readonly name: string;
  readonly when: string;
}

export function starterExpressions(): NamedExpression[] {
  // Benchmarks run compiled, from the package root (npm run bench), so resolve from there.
  const dir = pathToFileURL(`${resolve("starter-rules")}/`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".toml"))
    .sort()
    .map((f) => {
      const rule = parseToml(readFileSync(new URL(f, dir), "utf8"));
      if (typeof rule.when !== "string") throw new Error(`${f}: no when`);
      return { name: f.replace(/\.toml$/, ""), when: rule.when };
    });
}
