/**
 * An entry of `[memory.rules] enforce` (REQ-10): a rule's name, enforced whatever content the name
 * has, or `NAME@HASH`, enforced only while the loaded rule's REQ-9 content hash is HASH. A pin follows
 * what the operator reviewed: a later sync that changes the rule ends its enforcement until the operator
 * pins the new hash (decision 0011).
 */

export interface EnforceEntry {
  readonly name: string;
  /** The pinned content hash (64 lowercase hex digits); undefined for a plain name. */
  readonly hash: string | undefined;
}

/** REQ-9's content hash as `harness rules show` prints it: hex SHA-256. */
const HASH = /^[0-9a-f]{64}$/;

export type EnforceEntryParse =
  | { readonly ok: true; readonly entry: EnforceEntry }
  | { readonly ok: false; readonly message: string };

/**
 * A plain entry is taken as written, as before pins existed (a name no rule has is reported, not
 * refused); an entry with `@` must be a pin, with exactly one `@`, a name before it and a full hash after.
 */
export function parseEnforceEntry(text: string): EnforceEntryParse {
  const at = text.indexOf("@");
  if (at < 0) return { ok: true, entry: { name: text, hash: undefined } };
  const name = text.slice(0, at);
  const hash = text.slice(at + 1);
  if (name === "")
    return { ok: false, message: `${JSON.stringify(text)}: a pin is NAME@HASH, and the name is missing` };
  if (!HASH.test(hash))
    return {
      ok: false,
      message: `${JSON.stringify(text)}: a pin is NAME@HASH, HASH the rule's 64 lowercase hex digit content hash (harness rules enforce ${name} prints it)`,
    };
  return { ok: true, entry: { name, hash } };
}

/** The entry as the config writes it. */
export const formatEnforceEntry = (entry: EnforceEntry): string =>
  entry.hash === undefined ? entry.name : `${entry.name}@${entry.hash}`;

/**
 * The entries of a list, by name (one name may carry more than one pin: any of them enforces). A
 * malformed entry (the config loader refuses those) counts as the name it was written as, so it matches
 * no rule and is reported like any unknown name.
 */
export function enforceEntries(list: readonly string[]): ReadonlyMap<string, readonly EnforceEntry[]> {
  const byName = new Map<string, EnforceEntry[]>();
  for (const text of list) {
    const parsed = parseEnforceEntry(text);
    const entry = parsed.ok ? parsed.entry : { name: text, hash: undefined };
    byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
  }
  return byName;
}

/** Whether a name's entries enforce its loaded rule of content hash `hash`: a pin only while it matches. */
export const entriesEnforce = (entries: readonly EnforceEntry[] | undefined, hash: string): boolean =>
  entries?.some((e) => e.hash === undefined || e.hash === hash) ?? false;
