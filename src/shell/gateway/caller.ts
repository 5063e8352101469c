/**
 * Who is calling the gateway (SPEC-0005 "Caller Identity"): what the caller's token says, and nothing
 * the caller states. One small function answers it (`IdentifyToken`), so the gateway never learns how
 * tokens are kept; the daemon wires it to its token registry.
 */

/** A caller as its gateway token names it. */
export interface GatewayCaller {
  /** The token's id, for logs (never the token). */
  readonly tokenId: string;
  readonly harness: string;
  /** `<harness>#<run id>` when the token belongs to one run; a harness-wide token has none. */
  readonly run?: string;
}

/** The caller a presented token belongs to now, or undefined (unknown, revoked, expired, not a gateway token). */
export type IdentifyToken = (token: string) => GatewayCaller | undefined;

/** What the daemon's token registry knows of a token, as much as the gateway needs. */
export interface IssuedTokenView {
  readonly id: string;
  readonly kind: string;
  readonly harness?: string | undefined;
  readonly run?: string | undefined;
}

/**
 * The gateway caller an issued token names: only a gateway token bound to a harness is one (a producer
 * or read token is not, whatever it grants on the RPC socket), and a run token's run must be its
 * harness's.
 */
export function gatewayCaller(issued: IssuedTokenView | undefined): GatewayCaller | undefined {
  if (issued?.kind !== "gateway" || issued.harness === undefined) return undefined;
  if (issued.run === undefined) return { tokenId: issued.id, harness: issued.harness };
  const run = qualifiedRun(issued.harness, issued.run);
  return run === undefined ? undefined : { tokenId: issued.id, harness: issued.harness, run };
}

/** A token's run as the journal names runs: `<harness>#<run id>`, given either form. */
export function qualifiedRun(harness: string, run: string): string | undefined {
  const hash = run.indexOf("#");
  if (hash < 0) return `${harness}#${run}`;
  return run.slice(0, hash) === harness ? run : undefined;
}

/**
 * Whether the caller is a rule miner: a run of a harness listed in `[memory] rule_miners` (REQ-15). A
 * harness-wide token is not a run, so it never is one.
 */
export const isMiner = (caller: GatewayCaller, ruleMiners: readonly string[]): boolean =>
  caller.run !== undefined && ruleMiners.includes(caller.harness);
