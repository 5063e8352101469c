/** The help overlay: every key, as `?` lists it. */
export const HELP_LINES: readonly string[] = [
  "Keys (as in k9s and lazygit):",
  "  ?            this help; Esc or ? closes it",
  "  1-6          switch view: 1 Feed, 2 Shadow, 3 Holds, 4 Proposals, 5 Annotations, 6 Rules",
  "  Tab          next view (Shift-Tab: previous)",
  "  j / Down     move down",
  "  k / Up       move up",
  "  PgDn / PgUp  move a page; g / G first / last row",
  "  Enter        drill in: a fire's explanation, a node's annotations, a proposal or rule in full",
  "  Esc          back out (explanation, node, dialog); clears the filter",
  "  /            filter the current view: type, Enter keeps it, Esc clears it",
  "  c            Holds: clear the selected hold (asks y/n; needs the control token)",
  "  q            quit (Ctrl-C too)",
];
