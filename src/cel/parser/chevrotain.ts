/**
 * chevrotain's runtime, from the single-file ESM bundle its package ships (`lib/chevrotain.mjs`), not
 * from its `exports` entry (`lib/src/api.js`), which imports some 600 lodash-es modules one by one: on
 * these machines that costs ~490 ms a process against ~45 ms for the bundle, and every daemon start
 * and every command that reads a rule pays it. Same package, same version, same exports
 * (`test/cel/chevrotain-bundle.test.ts`). Types still come from the package.
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import type * as Chevrotain from "chevrotain";

// The `require` condition's entry is lib/src/api.js; the bundle sits beside lib/src.
const entry = createRequire(import.meta.url).resolve("chevrotain");
export const CHEVROTAIN_BUNDLE = path.join(path.dirname(entry), "..", "chevrotain.mjs");

const chevrotain = (await import(pathToFileURL(CHEVROTAIN_BUNDLE).href)) as typeof Chevrotain;

export const { createToken, EmbeddedActionsParser, EOF, Lexer } = chevrotain;
