/**
 * `matches`: RE2 syntax with RE2's linear-time guarantee, through re2js (a pure-JS port of RE2/J that
 * follows Go's dialect, as cel-go does). A match is found anywhere in the string: `RE2JS.test`, never its
 * whole-string `matches`.
 */
import { RE2JS } from "re2js";
import type { FunctionDecl } from "../env.js";
import { CelError, type Result } from "../runtime/values.js";
import { T } from "../types.js";
import { fn, global, member } from "./declare.js";

export type CompiledRegex = { readonly test: (input: string) => boolean };

/** Compiles a pattern, or names why it is not RE2 (backreferences, lookaround…). */
export function compileRegex(pattern: string): CompiledRegex | CelError {
  try {
    const re = RE2JS.compile(pattern);
    return { test: (input) => re.test(input) };
  } catch (e) {
    return new CelError(e instanceof Error ? e.message : `invalid regular expression: ${pattern}`);
  }
}

// Patterns computed at run time are compiled once each; a constant pattern is compiled with the program.
const CACHE_LIMIT = 256;
const cache = new Map<string, CompiledRegex | CelError>();

function cachedRegex(pattern: string): CompiledRegex | CelError {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = compileRegex(pattern);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, re);
  }
  return re;
}

export function matches(input: string, pattern: string): Result {
  const re = cachedRegex(pattern);
  return re instanceof CelError ? re : re.test(input);
}

export const regexFunctions: readonly FunctionDecl[] = [
  fn(
    "matches",
    global("matches", [T.string, T.string], T.bool, matches),
    member("matches_string", [T.string, T.string], T.bool, matches),
  ),
];
