/**
 * A strict JSON (RFC 8259) reader that keeps where every value stands in the text, so an agent's
 * settings file can be edited in place: the bytes we do not touch stay as the operator wrote them, and
 * an entry we insert can later be cut out to give back the same bytes. A leading byte order mark is
 * allowed (and kept); comments, trailing commas and anything after the value are syntax errors, located
 * by offset, as the agents themselves would refuse them.
 */

export type JsonNode = JsonObject | JsonArray | JsonScalar;

interface Span {
  /** Offset of the value's first character. */
  readonly start: number;
  /** Offset just past its last character. */
  readonly end: number;
}

export interface JsonMember {
  readonly key: string;
  /** Offset of the key's opening quote: a member spans from here to its value's end. */
  readonly start: number;
  readonly value: JsonNode;
}

export interface JsonObject extends Span {
  readonly kind: "object";
  readonly members: readonly JsonMember[];
}

export interface JsonArray extends Span {
  readonly kind: "array";
  readonly items: readonly JsonNode[];
}

export interface JsonScalar extends Span {
  readonly kind: "string" | "number" | "boolean" | "null";
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = "JsonSyntaxError";
  }
}

/** Nesting deeper than this is refused rather than risking the stack on a hostile file. */
const MAX_DEPTH = 512;

const isWs = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// The characters a string holds unescaped: not `"`, `\\`, or below U+0020 (JSON wants those escaped).
const STRING_BODY = /(?:[^"\\\p{Cc}]|[\x7f-\x9f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/uy;

/** Parses `text` as one JSON value; throws `JsonSyntaxError` at the first offending offset. */
export function parseJsonText(text: string): JsonNode {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const skip = () => {
    while (isWs(text[i])) i++;
  };
  const fail = (what: string): never => {
    const found = i >= text.length ? "the end of the file" : JSON.stringify(text[i]);
    throw new JsonSyntaxError(`expected ${what}, found ${found}`, i);
  };
  const string = (): number => {
    const start = i;
    i++;
    STRING_BODY.lastIndex = i;
    STRING_BODY.exec(text);
    i = STRING_BODY.lastIndex;
    if (text[i] !== '"') {
      if (i < text.length && text.charCodeAt(i) < 0x20) fail("a control character to be escaped");
      fail(text[i] === "\\" ? "a valid escape" : 'a closing "');
    }
    i++;
    return start;
  };
  const value = (depth: number): JsonNode => {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError(`nesting deeper than ${MAX_DEPTH} levels`, i);
    skip();
    const start = i;
    const c = text[i];
    if (c === "{") {
      i++;
      const members: JsonMember[] = [];
      skip();
      if (text[i] === "}") {
        i++;
        return { kind: "object", start, end: i, members };
      }
      for (;;) {
        skip();
        if (text[i] !== '"') fail('a key in double quotes ("…")');
        const keyStart = string();
        const key = JSON.parse(text.slice(keyStart, i)) as string;
        skip();
        if (text[i] !== ":") fail('":" after the key');
        i++;
        members.push({ key, start: keyStart, value: value(depth + 1) });
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return { kind: "object", start, end: i, members };
        }
        fail('"," or "}"');
      }
    }
    if (c === "[") {
      i++;
      const items: JsonNode[] = [];
      skip();
      if (text[i] === "]") {
        i++;
        return { kind: "array", start, end: i, items };
      }
      for (;;) {
        items.push(value(depth + 1));
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return { kind: "array", start, end: i, items };
        }
        fail('"," or "]"');
      }
    }
    if (c === '"') {
      string();
      return { kind: "string", start, end: i };
    }
    for (const [word, kind] of [
      ["true", "boolean"],
      ["false", "boolean"],
      ["null", "null"],
    ] as const)
      if (text.startsWith(word, i)) {
        i += word.length;
        return { kind, start, end: i };
      }
    NUMBER.lastIndex = i;
    if (NUMBER.exec(text) !== null && NUMBER.lastIndex > i) {
      i = NUMBER.lastIndex;
      return { kind: "number", start, end: i };
    }
    return fail("a JSON value");
  };
  const root = value(0);
  skip();
  if (i < text.length) fail("the end of the file after the value");
  return root;
}

/** The plain value a node holds. */
export const nodeValue = (text: string, node: JsonNode): unknown =>
  JSON.parse(text.slice(node.start, node.end));

export const member = (node: JsonObject, key: string): JsonMember | undefined =>
  // The last of duplicate keys is the one JSON.parse and the agents keep.
  node.members.findLast((m) => m.key === key);
