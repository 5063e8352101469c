/**
 * CEL's static types, as the checker computes them and the standard library declares them.
 *
 * `param` is a type parameter of a generic overload (`A` in `list(A).size()`); the checker substitutes
 * it per call. `dyn` is gradual typing's unknown: assignable to and from everything. `error` marks a
 * node whose type could not be computed (its diagnostic was already reported).
 */
export type Type =
  | { readonly kind: "int" | "uint" | "double" | "bool" | "string" | "bytes" | "null_type" }
  | { readonly kind: "timestamp" | "duration" | "dyn" | "error" }
  | { readonly kind: "list"; readonly elem: Type }
  | { readonly kind: "map"; readonly key: Type; readonly value: Type }
  /** The type of a type value; `param` is the type it denotes, when known (`type(int)`). */
  | { readonly kind: "type"; readonly param: Type | undefined }
  | { readonly kind: "object"; readonly name: string }
  | { readonly kind: "param"; readonly name: string };

const prim = <K extends Type["kind"]>(kind: K) => ({ kind }) as Type;

export const T = {
  int: prim("int"),
  uint: prim("uint"),
  double: prim("double"),
  bool: prim("bool"),
  string: prim("string"),
  bytes: prim("bytes"),
  null: prim("null_type"),
  timestamp: prim("timestamp"),
  duration: prim("duration"),
  dyn: prim("dyn"),
  error: prim("error"),
  list: (elem: Type): Type => ({ kind: "list", elem }),
  map: (key: Type, value: Type): Type => ({ kind: "map", key, value }),
  type: (param?: Type): Type => ({ kind: "type", param }),
  object: (name: string): Type => ({ kind: "object", name }),
  param: (name: string): Type => ({ kind: "param", name }),
} as const;

/** The type's name as CEL spells it: `int`, `list(string)`, `map(string, dyn)`, `type(int)`. */
export function formatType(t: Type): string {
  switch (t.kind) {
    case "list":
      return `list(${formatType(t.elem)})`;
    case "map":
      return `map(${formatType(t.key)}, ${formatType(t.value)})`;
    case "type":
      return t.param === undefined ? "type" : `type(${formatType(t.param)})`;
    case "object":
    case "param":
      return t.name;
    case "timestamp":
      return "google.protobuf.Timestamp";
    case "duration":
      return "google.protobuf.Duration";
    default:
      return t.kind;
  }
}

export function typeEquals(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case "list":
      return typeEquals(a.elem, (b as typeof a).elem);
    case "map":
      return typeEquals(a.key, (b as typeof a).key) && typeEquals(a.value, (b as typeof a).value);
    case "type": {
      const bp = (b as typeof a).param;
      return a.param === undefined || bp === undefined ? a.param === bp : typeEquals(a.param, bp);
    }
    case "object":
    case "param":
      return a.name === (b as typeof a).name;
    default:
      return true;
  }
}

/** The runtime type name a value of this static type reports through `type(x)`. */
export function runtimeTypeName(t: Type): string {
  switch (t.kind) {
    case "list":
      return "list";
    case "map":
      return "map";
    case "type":
      return "type";
    default:
      return formatType(t);
  }
}
