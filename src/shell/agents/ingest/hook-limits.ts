/**
 * Bounds the hook endpoint and the command forwarder share. Imports nothing: the forwarder's import
 * graph stays small.
 */

/**
 * The largest hook payload read: a Write's whole file content is in its input, so payloads are larger
 * than rows, but a payload beyond this is refused unread (the tool still runs) rather than buffered.
 */
export const MAX_HOOK_PAYLOAD_BYTES = 8 * 1024 * 1024;

/** The header carrying the ledger token beside `Authorization: Bearer <observer token>`. */
export const LEDGER_TOKEN_HEADER = "x-harness-ledger-token";
/** A spooled payload's original time (ms since the epoch) and its idempotency key. */
export const HOOK_AT_HEADER = "x-harness-hook-at";
export const HOOK_KEY_HEADER = "x-harness-hook-key";
/**
 * The command hook's fast path sends the call's nonce rather than its key (it parses no JSON): the
 * daemon derives the key from the payload and the nonce as the forwarder does (`hook-key.ts`).
 */
export const HOOK_CALL_HEADER = "x-harness-hook-call";
/** What became of the call's row (`admitted`, `none`, `rejected`, `dropped`), for the forwarder. */
export const ROW_HEADER = "x-harness-row";
/** A line for the hook's stderr: why nothing was recorded. Plain ASCII-safe text, one line. */
export const NOTE_HEADER = "x-harness-note";

export const HOOK_PATH_PREFIX = "/hooks/";
/** Where the daemon proves it is the endpoint (`hook-challenge.ts`): no hook format may be called this. */
export const CHALLENGE_PATH = "/hooks/challenge";

/**
 * Set (to `1`) by a forwarder that computed the call's git facts on the agent's machine (a remote
 * install, decision 0017): the body is then the envelope of `supplied-facts.ts`, the payload inside it.
 */
export const HOOK_FACTS_HEADER = "x-harness-hook-facts";
/** What the envelope may add to a payload: its facts and clock (64 paths of 1024 code points at most). */
export const MAX_FACTS_BYTES = 512 * 1024;

/** A remote daemon as a remote install names it (decision 0017): its hook endpoint and the TLS files. */
export interface RemoteDaemon {
  /** `https://host:port`. */
  readonly url: string;
  readonly caFile?: string;
  readonly clientCert?: string;
  readonly clientKey?: string;
}
