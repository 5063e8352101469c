/** 64-bit integer and IEEE double arithmetic with CEL's errors: overflow and division by zero. */
import { CelError, INT64_MAX, INT64_MIN, type Result, UINT64_MAX, UInt } from "./values.js";

const overflow = () => new CelError("integer overflow");

function int(r: bigint): Result {
  return r < INT64_MIN || r > INT64_MAX ? overflow() : r;
}

function uint(r: bigint): Result {
  return r < 0n || r > UINT64_MAX ? overflow() : new UInt(r);
}

export const addInt = (a: bigint, b: bigint): Result => int(a + b);
export const subtractInt = (a: bigint, b: bigint): Result => int(a - b);
export const multiplyInt = (a: bigint, b: bigint): Result => int(a * b);
export const negateInt = (a: bigint): Result => int(-a);

export function divideInt(a: bigint, b: bigint): Result {
  if (b === 0n) return new CelError("divide by zero");
  // bigint division truncates toward zero, as CEL's does; only MIN / -1 leaves the range.
  return int(a / b);
}

export function moduloInt(a: bigint, b: bigint): Result {
  if (b === 0n) return new CelError("modulus by zero");
  if (a === INT64_MIN && b === -1n) return overflow();
  return a % b;
}

export const addUint = (a: UInt, b: UInt): Result => uint(a.value + b.value);
export const subtractUint = (a: UInt, b: UInt): Result => uint(a.value - b.value);
export const multiplyUint = (a: UInt, b: UInt): Result => uint(a.value * b.value);

export function divideUint(a: UInt, b: UInt): Result {
  return b.value === 0n ? new CelError("divide by zero") : new UInt(a.value / b.value);
}

export function moduloUint(a: UInt, b: UInt): Result {
  return b.value === 0n ? new CelError("modulus by zero") : new UInt(a.value % b.value);
}
