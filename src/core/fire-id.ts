/**
 * A fire's id, `f-<seq>-<n>`: the seq of the journal row that fired and the fire's place among that
 * row's fires, from 0. `evaluate` builds it; the fire log, the console's feed order and evidence ids read
 * it back through `parseFireId`, which takes exactly what `fireId` makes (no sign, no leading zero, no
 * number past a safe integer) and refuses anything else.
 */

export interface FireIdParts {
  /** The journal row that fired: a non-negative safe integer. */
  readonly seq: number;
  /** The fire's place among the row's fires: a non-negative safe integer. */
  readonly index: number;
}

/** The longest id `fireId` makes: two 16-digit numbers; a longer text is refused before it is read. */
export const MAX_FIRE_ID_LENGTH = "f-".length + 16 + "-".length + 16;

// No nested or overlapping quantifiers: matching is linear in the (already bounded) length.
const FIRE_ID = /^f-(0|[1-9][0-9]{0,15})-(0|[1-9][0-9]{0,15})$/;

/** The id of the `index`th fire of row `seq`; both are non-negative safe integers. */
export const fireId = (seq: number, index: number): string => `f-${seq}-${index}`;

/** The row and place a fire id names; undefined for any text `fireId` cannot make. */
export function parseFireId(id: string): FireIdParts | undefined {
  if (id.length > MAX_FIRE_ID_LENGTH) return undefined;
  const m = FIRE_ID.exec(id);
  if (m === null) return undefined;
  const seq = Number(m[1]);
  const index = Number(m[2]);
  return Number.isSafeInteger(seq) && Number.isSafeInteger(index) ? { seq, index } : undefined;
}
