/**
 * Reference names of CEL's operators, as the CEL specification and every implementation spell them, so an
 * AST can be compared with the reference parser's and the standard library can key overloads on them.
 */
export const Op = {
  conditional: "_?_:_",
  logicalAnd: "_&&_",
  logicalOr: "_||_",
  logicalNot: "!_",
  negate: "-_",
  equals: "_==_",
  notEquals: "_!=_",
  less: "_<_",
  lessEquals: "_<=_",
  greater: "_>_",
  greaterEquals: "_>=_",
  in: "@in",
  add: "_+_",
  subtract: "_-_",
  multiply: "_*_",
  divide: "_/_",
  modulo: "_%_",
  index: "_[_]",
  /** Loop condition of `all` and `exists`: false only for a definite `false`, so errors can be absorbed. */
  notStrictlyFalse: "@not_strictly_false",
} as const;

export type BinaryOperator =
  | typeof Op.logicalOr
  | typeof Op.logicalAnd
  | typeof Op.equals
  | typeof Op.notEquals
  | typeof Op.less
  | typeof Op.lessEquals
  | typeof Op.greater
  | typeof Op.greaterEquals
  | typeof Op.in
  | typeof Op.add
  | typeof Op.subtract
  | typeof Op.multiply
  | typeof Op.divide
  | typeof Op.modulo;

/** Binding strength of binary operators: higher binds tighter. All are left-associative. */
export const BINARY_PRECEDENCE: Readonly<Record<BinaryOperator, number>> = {
  [Op.logicalOr]: 1,
  [Op.logicalAnd]: 2,
  [Op.equals]: 3,
  [Op.notEquals]: 3,
  [Op.less]: 3,
  [Op.lessEquals]: 3,
  [Op.greater]: 3,
  [Op.greaterEquals]: 3,
  [Op.in]: 3,
  [Op.add]: 4,
  [Op.subtract]: 4,
  [Op.multiply]: 5,
  [Op.divide]: 5,
  [Op.modulo]: 5,
};

/** The source spelling of each binary operator. */
export const BINARY_SYMBOL: Readonly<Record<BinaryOperator, string>> = {
  [Op.logicalOr]: "||",
  [Op.logicalAnd]: "&&",
  [Op.equals]: "==",
  [Op.notEquals]: "!=",
  [Op.less]: "<",
  [Op.lessEquals]: "<=",
  [Op.greater]: ">",
  [Op.greaterEquals]: ">=",
  [Op.in]: "in",
  [Op.add]: "+",
  [Op.subtract]: "-",
  [Op.multiply]: "*",
  [Op.divide]: "/",
  [Op.modulo]: "%",
};

export function isBinaryOperator(fn: string): fn is BinaryOperator {
  return Object.hasOwn(BINARY_PRECEDENCE, fn);
}
