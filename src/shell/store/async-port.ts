/**
 * A store object's asynchronous door (decision 0020): each of its methods, answering with a promise.
 * SQLite's classes are synchronous; a backend whose statements are round trips (PostgreSQL) implements
 * `AsyncPort<SqliteClass>`, so both answer the same calls alike, and callers move to the port a step at
 * a time. A property that is not a method is kept as it is.
 */
export type AsyncPort<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : T[K];
};

/** Resolves with `work()`'s result, or rejects with what it threw: a failed statement is a rejection. */
export const settled = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (e) {
    return Promise.reject(e);
  }
};

/**
 * A synchronous store object behind its asynchronous door: each method of its class (and the classes
 * it extends) answers through `settled`, bound to `target`; its own properties that are not methods
 * are copied as they are. What SQLite's door hands out, so callers see one convention on both backends.
 */
export function promised<T extends object>(target: T): AsyncPort<T> {
  const port: Record<string, unknown> = {};
  for (
    let proto: object | null = Object.getPrototypeOf(target) as object | null;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  )
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name === "constructor" || name in port || typeof method !== "function") continue;
      port[name] = (...args: unknown[]) => settled(() => method.apply(target, args));
    }
  for (const [name, value] of Object.entries(target))
    if (!(name in port) && typeof value !== "function") port[name] = value;
  return port as AsyncPort<T>;
}
