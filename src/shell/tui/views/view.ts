/**
 * What every view is: a name and its number key, a header, and rows built from the snapshot, each row
 * one escaped line and what Enter opens on it. The app owns the cursor, the filter and the keys, so a
 * view is only a way to read the snapshot.
 */
import type { ConsoleSnapshot } from "../console-data.js";
import type { TuiText } from "../text.js";

/** What Enter opens on a row. */
export type Drill =
  | { readonly kind: "fire"; readonly fireId: string }
  | { readonly kind: "node"; readonly node: string }
  | { readonly kind: "lines"; readonly title: string; readonly lines: readonly string[] };

export interface Row {
  readonly id: string;
  /** The line as shown: every producer-supplied part already escaped. */
  readonly text: string;
  readonly drill?: Drill;
  /** Holds view: the hold `c` clears. */
  readonly hold?: { readonly harness: string; readonly rule: string };
}

/** A view laid out for a `screen` columns wide terminal (`../columns.ts`). */
export interface ViewSpec {
  readonly name: string;
  readonly header: (screen: number) => string;
  /** Shown when the view has no rows. */
  readonly empty: string;
  readonly rows: (s: ConsoleSnapshot, t: TuiText, screen: number) => Row[];
  /**
   * A long view (the feed, a thousand entries) builds only the rows on screen while it is not
   * filtered: how many rows it has, and those from `from` up to `to`.
   */
  readonly lazy?: {
    readonly size: (s: ConsoleSnapshot) => number;
    readonly slice: (s: ConsoleSnapshot, t: TuiText, from: number, to: number, screen: number) => Row[];
  };
}
