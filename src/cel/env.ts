/**
 * An environment: the variables, object types and functions an expression may use.
 *
 * The rules core declares one environment per event kind (`event`, `now`, the windowed primitives); the
 * conformance runner declares what each case needs. Environments are immutable; `extend` makes a new one.
 */
import type { Activation } from "./compile/frame.js";
import type { Result, Value } from "./runtime/values.js";
import type { Type } from "./types.js";

/** Sizes the cost estimator may assume for a value (characters of a string, elements of a list). */
export interface SizeBound {
  readonly max: number;
  /** For a list or map: the bound of each element (or value). */
  readonly elem?: SizeBound;
}

export interface FieldDecl {
  readonly type: Type;
  readonly size?: SizeBound;
}

/** An object type; a field an object does not set reads as the zero value of the field's type. */
export interface ObjectTypeDecl {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldDecl>>;
}

export interface VariableDecl {
  readonly name: string;
  readonly type: Type;
  readonly size?: SizeBound;
}

/** How a function's cost is charged: a fixed number of units per call, for custom functions. */
export interface FixedCost {
  readonly fixed: number;
}

interface OverloadBase {
  /** Unique across the environment, e.g. `add_int64`, `size_string`. */
  readonly id: string;
  /** Parameter types; for a receiver-style overload the receiver's type comes first. */
  readonly params: readonly Type[];
  readonly result: Type;
  readonly receiver?: boolean;
  /**
   * What the implementation accepts at run time, when wider than `params` (a list index may arrive
   * as a uint or an integral double under `dyn`, though only an int type-checks).
   */
  readonly runtimeParams?: readonly Type[];
  readonly cost?: FixedCost;
}

/** A function of its arguments alone, called with values of the parameter types (never errors). */
export interface PureOverload extends OverloadBase {
  readonly impl: (...args: Value[]) => Result;
  readonly prepare?: undefined;
}

/**
 * A host function that also reads the evaluation's activation (the rules primitives read the journal
 * window the shell or the backtest binds there). Never folded, never cached: it may differ per call.
 * It is made for each call site, once, at compile time (`prepare`): the site says which arguments are
 * constants and which are map literals with string-literal keys, and such a literal reaches the
 * prepared call as the array of its values, never built as a map (the rules primitives' selectors).
 */
export interface ContextualOverload extends OverloadBase {
  readonly prepare: (site: CallSite) => PreparedCall;
  readonly impl?: undefined;
}

/** What the compiler knows of one call site's arguments. */
export interface CallSite {
  /** Per argument: its value when it is a compile-time constant (a literal, a folded `duration("1h")`). */
  readonly constants: readonly (Value | undefined)[];
  /**
   * Per argument: when it is a map literal whose keys are distinct string literals, those keys in
   * source order. Such an argument reaches the prepared call as the array of its values, in that order.
   */
  readonly recordKeys: readonly (readonly string[] | undefined)[];
}

/**
 * A call prepared for its site, given the activation and the arguments (a record argument as its
 * values). It is charged what the call costs (a record's creation and values, then the overload's
 * units) before it runs.
 */
export type PreparedCall = (vars: Activation, args: readonly Value[]) => Result;

export type OverloadDecl = PureOverload | ContextualOverload;

export interface FunctionDecl {
  readonly name: string;
  readonly overloads: readonly OverloadDecl[];
}

export interface EnvOptions {
  readonly container?: string;
  readonly variables?: readonly VariableDecl[];
  readonly objectTypes?: readonly ObjectTypeDecl[];
  readonly functions?: readonly FunctionDecl[];
}

export class Env {
  readonly container: string;
  private readonly variables: ReadonlyMap<string, VariableDecl>;
  private readonly objectTypes: ReadonlyMap<string, ObjectTypeDecl>;
  private readonly functions: ReadonlyMap<string, FunctionDecl>;

  constructor(options: EnvOptions = {}) {
    this.container = options.container ?? "";
    this.variables = new Map((options.variables ?? []).map((v) => [v.name, v]));
    this.objectTypes = new Map((options.objectTypes ?? []).map((t) => [t.name, t]));
    const functions = new Map<string, FunctionDecl>();
    for (const f of options.functions ?? []) {
      const existing = functions.get(f.name);
      functions.set(
        f.name,
        existing ? { name: f.name, overloads: [...existing.overloads, ...f.overloads] } : f,
      );
    }
    this.functions = functions;
  }

  /** A new environment with these declarations added (later overloads of a name join earlier ones). */
  extend(options: EnvOptions): Env {
    return new Env({
      container: options.container ?? this.container,
      variables: [...this.variables.values(), ...(options.variables ?? [])],
      objectTypes: [...this.objectTypes.values(), ...(options.objectTypes ?? [])],
      functions: [...this.functions.values(), ...(options.functions ?? [])],
    });
  }

  /**
   * Names a (possibly qualified) name may resolve to, most specific first: with container `a.b`, the
   * name `c` is tried as `a.b.c`, `a.c`, then `c`; a leading dot means the root only.
   */
  candidateNames(name: string): string[] {
    if (name.startsWith(".")) return [name.slice(1)];
    const out: string[] = [];
    const parts = this.container === "" ? [] : this.container.split(".");
    for (let i = parts.length; i > 0; i--) out.push(`${parts.slice(0, i).join(".")}.${name}`);
    out.push(name);
    return out;
  }

  variable(name: string): VariableDecl | undefined {
    return this.variables.get(name);
  }

  objectType(name: string): ObjectTypeDecl | undefined {
    return this.objectTypes.get(name);
  }

  function(name: string): FunctionDecl | undefined {
    return this.functions.get(name);
  }
}
