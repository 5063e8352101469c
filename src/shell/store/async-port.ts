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
