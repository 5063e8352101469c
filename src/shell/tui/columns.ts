/**
 * A view's columns on a terminal of any width. Each column has the width it takes on an 80-column
 * terminal (whose rows have 78: two go to the cursor's mark); the columns that hold names (rules,
 * harnesses, targets, nodes) may grow on a wider terminal, up to a bound, so that a long name is cut
 * only where the screen is narrow. Half of the width past 78 goes to
 * the growing columns, in proportion to how far each may grow; the rest goes to the free text at the end
 * of the line (a message, a reason, a link), which the screen's edge cuts.
 */
import { cell } from "./text.js";

export interface Column {
  readonly title: string;
  /** The width on an 80-column terminal. */
  readonly width: number;
  /** The most it may take on a wide terminal; `width` when it never grows. */
  readonly upTo?: number;
}

/** The width of a row on an 80-column terminal: every view fits it. */
export const BASE_WIDTH = 78;

/** Each column's width in rows `screen` wide. */
export function columnWidths(columns: readonly Column[], screen: number): number[] {
  const room = columns.map((c) => Math.max(0, (c.upTo ?? c.width) - c.width));
  const total = room.reduce((a, b) => a + b, 0);
  const extra = Math.min(total, Math.floor(Math.max(0, screen - BASE_WIDTH) / 2));
  return columns.map((c, i) => c.width + (total === 0 ? 0 : Math.floor((extra * (room[i] ?? 0)) / total)));
}

/** A table's header and lines at one screen width. */
export interface Layout {
  readonly header: string;
  /** One line: each column's text cut or padded to its width, then the free text. */
  line(cells: readonly string[], rest: string): string;
}

/** The layout of `columns`, then the free text titled `tail`, in rows `screen` wide. */
export function layout(columns: readonly Column[], tail: string, screen: number): Layout {
  const widths = columnWidths(columns, screen);
  return {
    header: [...columns.map((c, i) => c.title.padEnd(widths[i] ?? c.width)), tail].join(" "),
    line: (cells, rest) => [...cells.map((s, i) => cell(s, widths[i] ?? s.length)), rest].join(" "),
  };
}
