/**
 * The RPC size limits, shared by server and clients; a module of its own so a client (the CLI asking
 * `rules admission` before every spawn) loads no more than it needs.
 */

/** The largest request or response message accepted (Connect's own default is about 4 GiB). */
export const DEFAULT_READ_MAX_BYTES = 4 * 1024 * 1024;

/** Events in one `JournalService.Append`; a larger batch is refused whole. */
export const MAX_APPEND_BATCH = 1000;
