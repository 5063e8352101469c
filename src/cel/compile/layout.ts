/**
 * Positional objects. A declared object type's fields in their declared order are its `Layout`; a host
 * object decoded once into that order is `LaidOut`: every field has a slot, an unset one holding its
 * field's zero value, and a bit per field says which were set. The compiler resolves `event.f` to its
 * slot, so a field read is an indexed load from arrays of one shape in every rule rather than a load by
 * name that V8 sees with every rule's names at one site.
 */
export class Layout {
  /** Slot by field name. */
  readonly index: ReadonlyMap<string, number>;
  /** What reading an unset field gives, by slot. */
  readonly zeros: readonly unknown[];
  /** Fields that Object.prototype also names, which a host object must own to set. */
  private readonly inherited: readonly boolean[];
  /** The keys of the last plain object decoded, in order, and their slots (-1: not a field). */
  private readonly seen: string[] = [];
  private readonly seenSlot: number[] = [];

  constructor(
    readonly names: readonly string[],
    zeros: readonly unknown[],
  ) {
    this.index = new Map(names.map((n, i) => [n, i]));
    this.zeros = zeros;
    this.inherited = names.map((n) => n in Object.prototype);
  }

  /** Decodes a host object: each declared field to its slot, `undefined` and `null` as unset. */
  layOut(host: Readonly<Record<string, unknown>>): LaidOut {
    const proto: unknown = Object.getPrototypeOf(host);
    return proto === Object.prototype || proto === null ? this.plain(host) : this.general(host);
  }

  /**
   * A plain object (as JSON gives): its own enumerable keys are all `for…in` walks, so only the
   * fields it sets are visited, and each is owned.
   */
  private plain(host: Readonly<Record<string, unknown>>): LaidOut {
    const values = this.zeros.slice();
    const { seen, seenSlot } = this;
    let present = 0;
    let j = 0;
    for (const name in host) {
      // Objects from one producer list their keys in one order: a key where the last object had it
      // has the slot it had, known without a lookup (a memo: the result is the same either way).
      let i = seenSlot[j] as number;
      if (seen[j] !== name) {
        i = this.index.get(name) ?? -1;
        seen[j] = name;
        seenSlot[j] = i;
      }
      j++;
      if (i < 0) continue;
      const raw = host[name];
      if (raw !== undefined && raw !== null) {
        values[i] = raw;
        present |= 1 << i;
      }
    }
    return new LaidOut(this, values, present, host);
  }

  /** Any other object: each field read by name, set only when owned, as `has()` on it asks. */
  private general(host: Readonly<Record<string, unknown>>): LaidOut {
    const names = this.names;
    const values = this.zeros.slice();
    let present = 0;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const raw = this.inherited[i] && !Object.hasOwn(host, name) ? undefined : host[name];
      if (raw !== undefined && raw !== null) {
        values[i] = raw;
        if (this.inherited[i] || Object.hasOwn(host, name)) present |= 1 << i;
      }
    }
    return new LaidOut(this, values, present, host);
  }
}

/** A host object decoded into its type's layout; `source` is the object itself, for every other use. */
export class LaidOut {
  constructor(
    readonly layout: Layout,
    readonly values: readonly unknown[],
    /** Bit `i` set when field `i` was set. */
    readonly present: number,
    readonly source: Readonly<Record<string, unknown>>,
  ) {}
}
