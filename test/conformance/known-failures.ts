/**
 * Conformance cases we knowingly fail, each with its reason. The conformance test fails when a listed
 * case starts to pass, so this list can only shrink.
 */
export const KNOWN_PARSE_FAILURES: Readonly<Record<string, string>> = {};

export const KNOWN_EVAL_FAILURES: Readonly<Record<string, string>> = {};
