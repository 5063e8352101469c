/**
 * Whether a client and the daemon are versions that meet (decision 0018): every RPC client, the hook
 * forwarders and `harness mcp` send their version in `x-harness-version`, and the daemon answers its own in
 * the same header. Within one major version, minor versions one apart meet (an upgrade rolls across a
 * fleet one machine at a time); anything further apart is refused with a line naming both versions.
 * A client that sends no version (curl, builds before the header) is let through: the daemon cannot
 * tell its version, and refusing it would break every such caller at once.
 */

export const VERSION_HEADER = "x-harness-version";

/** The longest version a header may carry: longer is not a version this project makes. */
const MAX_VERSION = 64;

const SEMVER = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:[-+][0-9A-Za-z.+-]*)?$/;

interface Parsed {
  readonly major: number;
  readonly minor: number;
}

function parse(version: string): Parsed | undefined {
  if (version.length > MAX_VERSION) return undefined;
  const m = SEMVER.exec(version);
  return m === null ? undefined : { major: Number(m[1]), minor: Number(m[2]) };
}

/** Printable, bounded: a header value quoted back in a refusal is data, not text to trust. */
const shown = (version: string): string =>
  JSON.stringify(version.slice(0, MAX_VERSION).replace(/[^\x20-\x7e]/g, "?"));

/**
 * Why a client of version `client` (undefined: it sent none) may not use a daemon of version `daemon`,
 * or undefined when they meet.
 */
export function versionRefusal(daemon: string, client: string | undefined): string | undefined {
  if (client === undefined) return undefined;
  const ours = parse(daemon);
  const theirs = parse(client);
  if (ours === undefined) return undefined; // a daemon whose own version is no major.minor.patch refuses no one
  if (theirs === undefined)
    return `the client's version ${shown(client)} is not a version (major.minor.patch); this daemon is ${daemon}`;
  if (ours.major === theirs.major && Math.abs(ours.minor - theirs.minor) <= 1) return undefined;
  return `versions do not meet: this client is harness ${client}, the daemon is ${daemon}; a client works with a daemon of the same major version at most one minor version apart: upgrade the older one (docs/fleet.md, "Versions that meet")`;
}
