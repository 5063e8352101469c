/**
 * How a harness's hooks answer a tool call the rules could not judge: the daemon out of reach (the
 * command hook's forwarder), or its attempt not admitted or not evaluated in time (the daemon). A
 * harness installed with `--fail closed|open` carries its own mode in its hook (the forwarder's
 * `--fail` word, the http hook's `fail` query parameter); one installed without it follows the global
 * `[agents] on_unreachable`. Either way only tool calls are refused: a prompt or a session start is
 * never blocked by a daemon that is down.
 */
export const HOOK_FAIL_MODES = ["closed", "open"] as const;
/** What `harness agents install --fail` writes into a harness's hooks. */
export type HookFailMode = (typeof HOOK_FAIL_MODES)[number];

/** The http hook's query parameter carrying the harness's mode. */
export const FAIL_QUERY = "fail";

export type FailMode = "allow" | "deny";

/** The mode that answers, and where it comes from, for the reason an agent and the operator read. */
export interface FailPolicy {
  readonly mode: FailMode;
  readonly source: string;
}

export const isHookFailMode = (s: string | null | undefined): s is HookFailMode =>
  s === "closed" || s === "open";

/** A harness's own mode wins over the global `[agents] on_unreachable`. */
export function failPolicy(harness: HookFailMode | undefined, global: FailMode): FailPolicy {
  if (harness !== undefined)
    return {
      mode: harness === "closed" ? "deny" : "allow",
      source: `this harness's fail mode (--fail ${harness})`,
    };
  return { mode: global, source: `[agents] on_unreachable = "${global}"` };
}
