/**
 * Type-parameter bindings during checking, and assignability under them.
 *
 * Overload signatures share parameter names (`A`, `B`); each use of an overload renames them apart
 * (`instantiate`) so two calls never bind each other's parameters.
 */
import { T, type Type } from "../types.js";

export class Substitution {
  /**
   * Bindings made here, made on the first one (most trials bind nothing); a trial also sees its
   * parent's, which stay unchanged while it lives.
   */
  private bindings: Map<string, Type> | undefined;
  private fresh: number;

  private constructor(
    private readonly parent: Substitution | undefined,
    fresh: number,
  ) {
    this.fresh = fresh;
  }

  static empty(): Substitution {
    return new Substitution(undefined, 0);
  }

  /**
   * A trial on top of this substitution, to try an overload on without committing its bindings. It costs
   * nothing to make (it reads through to this one), so every candidate overload can have its own.
   */
  clone(): Substitution {
    return new Substitution(this, this.fresh);
  }

  /** Adopts the bindings of a trial made by `clone` on this substitution. */
  commit(trial: Substitution): void {
    if (trial.bindings !== undefined) for (const [k, v] of trial.bindings) this.bind(k, v);
    this.fresh = trial.fresh;
  }

  private binding(name: string): Type | undefined {
    for (let s: Substitution | undefined = this; s !== undefined; s = s.parent) {
      const b = s.bindings?.get(name);
      if (b !== undefined) return b;
    }
    return undefined;
  }

  private bind(name: string, t: Type): void {
    this.bindings ??= new Map();
    this.bindings.set(name, t);
  }

  /** A fresh type parameter, for an empty list's element type and the like. */
  freshParam(): Type {
    return T.param(`_T${this.fresh++}`);
  }

  /** Renames the parameters of an overload signature apart from every other use. */
  instantiate(types: readonly Type[]): Type[] {
    const renamed = new Map<string, Type>();
    const go = (t: Type): Type => {
      switch (t.kind) {
        case "param": {
          let r = renamed.get(t.name);
          if (r === undefined) {
            r = T.param(`_${t.name}${this.fresh++}`);
            renamed.set(t.name, r);
          }
          return r;
        }
        case "list":
          return T.list(go(t.elem));
        case "map":
          return T.map(go(t.key), go(t.value));
        case "type":
          return t.param === undefined ? t : T.type(go(t.param));
        default:
          return t;
      }
    };
    return types.map(go);
  }

  /**
   * `t` with every bound parameter replaced; unbound ones stay, or become dyn when `finalize`. A type
   * with nothing to replace comes back as the same object, so the common case allocates nothing.
   */
  apply(t: Type, finalize = false): Type {
    switch (t.kind) {
      case "param": {
        const b = this.binding(t.name);
        if (b !== undefined) return this.apply(b, finalize);
        return finalize ? T.dyn : t;
      }
      case "list": {
        const elem = this.apply(t.elem, finalize);
        return elem === t.elem ? t : T.list(elem);
      }
      case "map": {
        const key = this.apply(t.key, finalize);
        const value = this.apply(t.value, finalize);
        return key === t.key && value === t.value ? t : T.map(key, value);
      }
      case "type": {
        if (t.param === undefined) return t;
        const param = this.apply(t.param, finalize);
        return param === t.param ? t : T.type(param);
      }
      default:
        return t;
    }
  }

  /** Whether a value of type `actual` may stand where `expected` is wanted, binding parameters to make it so. */
  assign(expected: Type, actual: Type): boolean {
    const e = this.apply(expected);
    const a = this.apply(actual);
    if (e.kind === "param") {
      if (a.kind === "param" && a.name === e.name) return true;
      if (occurs(e.name, a)) return false;
      this.bind(e.name, a);
      return true;
    }
    if (a.kind === "param") {
      if (occurs(a.name, e)) return false;
      this.bind(a.name, e);
      return true;
    }
    if (e.kind === "dyn" || a.kind === "dyn" || e.kind === "error" || a.kind === "error") return true;
    if (e.kind !== a.kind) return e.kind === "object" && a.kind === "null_type";
    switch (e.kind) {
      case "list":
        return this.assign(e.elem, (a as typeof e).elem);
      case "map":
        return this.assign(e.key, (a as typeof e).key) && this.assign(e.value, (a as typeof e).value);
      case "type":
        // Type values of different types are comparable (`type(1) == type(1u)` is false, not an error).
        return true;
      case "object":
        return e.name === (a as typeof e).name;
      default:
        return true;
    }
  }
}

function occurs(name: string, t: Type): boolean {
  switch (t.kind) {
    case "param":
      return t.name === name;
    case "list":
      return occurs(name, t.elem);
    case "map":
      return occurs(name, t.key) || occurs(name, t.value);
    case "type":
      return t.param !== undefined && occurs(name, t.param);
    default:
      return false;
  }
}
