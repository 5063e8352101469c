/** `size` of every sized type, and the string predicates. `matches` lives in `regex.ts`. */
import type { FunctionDecl } from "../env.js";
import type { CelMap, Value } from "../runtime/values.js";
import { codePointLength } from "../source.js";
import { T } from "../types.js";
import { fn, global, member } from "./declare.js";

const A = T.param("A");
const B = T.param("B");

const stringSize = (s: string) => BigInt(codePointLength(s));
const bytesSize = (b: Uint8Array) => BigInt(b.length);
const listSize = (l: readonly Value[]) => BigInt(l.length);
const mapSize = (m: CelMap) => BigInt(m.size);

export const strings: readonly FunctionDecl[] = [
  fn(
    "size",
    global("size_string", [T.string], T.int, stringSize),
    global("size_bytes", [T.bytes], T.int, bytesSize),
    global("size_list", [T.list(A)], T.int, listSize),
    global("size_map", [T.map(A, B)], T.int, mapSize),
    member("string_size", [T.string], T.int, stringSize),
    member("bytes_size", [T.bytes], T.int, bytesSize),
    member("list_size", [T.list(A)], T.int, listSize),
    member("map_size", [T.map(A, B)], T.int, mapSize),
  ),
  fn(
    "contains",
    member("contains_string", [T.string, T.string], T.bool, (s: string, x: string) => s.includes(x)),
  ),
  fn(
    "startsWith",
    member("starts_with_string", [T.string, T.string], T.bool, (s: string, x: string) => s.startsWith(x)),
  ),
  fn(
    "endsWith",
    member("ends_with_string", [T.string, T.string], T.bool, (s: string, x: string) => s.endsWith(x)),
  ),
];
