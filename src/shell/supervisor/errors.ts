/**
 * What the reference supervisor's commands throw: a hold's refusal, which a caller shows the operator,
 * and a request it cannot carry out.
 */

/** `start`, `restart` or `trigger` of a held harness: the daemon's refusal, naming the rule and the clear command. */
export class HoldRefusal extends Error {
  constructor(
    readonly harness: string,
    readonly command: "start" | "restart" | "trigger",
    readonly rules: readonly string[],
    message: string,
  ) {
    super(`harness ${command} ${harness}: refused: ${message}`);
    this.name = "HoldRefusal";
  }
}

/** A request the supervisor cannot carry out: an unknown harness, the wrong kind, a run already in flight. */
export class SupervisorError extends Error {
  constructor(
    readonly harness: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${harness}: ${message}`, options);
    this.name = "SupervisorError";
  }
}
