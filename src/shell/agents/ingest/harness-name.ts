/**
 * The one rule for a harness name a hook may carry, shared by `harness agents install` (the name is a
 * directory of its token files) and the daemon's hook ingest (a run is `<harness>#<session>`): letters,
 * digits, `.`, `_` and `-`, starting with a letter or digit, 1 to 128 characters. Every name install
 * accepts, the ingest accepts.
 */
export const HARNESS_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The rule in words, for a refusal. */
export const HARNESS_NAME_RULE = "1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit";

export const isHarnessName = (s: string): boolean => HARNESS_NAME.test(s);
