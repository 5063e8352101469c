/**
 * Type-parameter bindings during checking, and assignability under them.
 *
 * Overload signatures share parameter names (`A`, `B`); each use of an overload renames them apart
 * (`instantiate`) so two calls never bind each other's parameters.
 */
import { T, type Type } from "../types.js";

export class Substitution {
  private readonly bindings = new Map<string, Type>();
  private fresh = 0;

  /** A copy to try an overload on without committing its bindings. */
  clone(): Substitution {
    const s = new Substitution();
    for (const [k, v] of this.bindings) s.bindings.set(k, v);
    s.fresh = this.fresh;
    return s;
  }

  /** Adopts a tried copy's bindings. */
  commit(trial: Substitution): void {
    this.bindings.clear();
    for (const [k, v] of trial.bindings) this.bindings.set(k, v);
    this.fresh = trial.fresh;
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

  /** `t` with every bound parameter replaced; unbound ones stay, or become dyn when `finalize`. */
  apply(t: Type, finalize = false): Type {
    switch (t.kind) {
      case "param": {
        const b = this.bindings.get(t.name);
        if (b !== undefined) return this.apply(b, finalize);
        return finalize ? T.dyn : t;
      }
      case "list":
        return T.list(this.apply(t.elem, finalize));
      case "map":
        return T.map(this.apply(t.key, finalize), this.apply(t.value, finalize));
      case "type":
        return t.param === undefined ? t : T.type(this.apply(t.param, finalize));
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
      this.bindings.set(e.name, a);
      return true;
    }
    if (a.kind === "param") {
      if (occurs(a.name, e)) return false;
      this.bindings.set(a.name, e);
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
