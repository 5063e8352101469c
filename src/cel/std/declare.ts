/** Small builders that keep the standard library's overload tables declarative and short. */
import type { FunctionDecl, PureOverload } from "../env.js";
import type { Result, Value } from "../runtime/values.js";
import type { Type } from "../types.js";

export function fn(name: string, ...overloads: PureOverload[]): FunctionDecl {
  return { name, overloads };
}

/** A global overload. */
export function global(
  id: string,
  params: readonly Type[],
  result: Type,
  impl: (...args: never[]) => Result,
): PureOverload {
  return { id, params, result, impl: impl as (...args: Value[]) => Result };
}

/** A receiver-style overload: `params[0]` is the receiver. */
export function member(
  id: string,
  params: readonly Type[],
  result: Type,
  impl: (...args: never[]) => Result,
): PureOverload {
  return { id, params, result, receiver: true, impl: impl as (...args: Value[]) => Result };
}
