/**
 * The bearer tokens the RPC server accepts, loaded from the credential files `[server]` names: one per
 * producer source (`[server.producers]`), an optional read token for TCP callers and the operator's
 * optional control token. Each file holds one token (surrounding whitespace ignored), at least 32 bytes,
 * and must not be readable by group or others: a token anyone on the machine can read protects nothing.
 * Only the tokens' SHA-256 digests are kept, so comparisons are over equal lengths (`tiers.ts`).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import * as fs from "node:fs";
import { open } from "node:fs/promises";
import * as path from "node:path";
import type { ProducerSource } from "../../core/sources.js";
import type { TokenKind } from "../store/token-store.js";
import { MAX_TOKEN_FILE_BYTES } from "../support/token-file.js";

/** The shortest token accepted, in bytes (the control plane's rule for TCP callers, applied to all). */
export const MIN_TOKEN_BYTES = 32;

/** Where each credential's token is read from: `[server.producers]`, `read_token_file`, `control_token_file`. */
export interface CredentialFiles {
  readonly producers: ReadonlyMap<ProducerSource, string>;
  readonly readTokenFile?: string;
  readonly controlTokenFile?: string;
}

/** The SHA-256 digest of a token. */
export type TokenDigest = Buffer;

/** A token the daemon issued (`harness token`, `issued-tokens.ts`), as the tier check needs it. */
export interface IssuedCredential {
  readonly id: string;
  readonly digest: TokenDigest;
  readonly kind: TokenKind;
  /** A producer token's source. */
  readonly source?: ProducerSource;
  /** A producer token bound to a harness appends only that harness's rows; a gateway token's harness. */
  readonly harness?: string;
  readonly run?: string;
  /** An operator's control token's label: who acted, in what it records (decision 0018). */
  readonly label?: string;
  readonly expiresMs?: number;
}

/** Who acted with the first control token (`[server] control_token_file`), in what an action records. */
export const FIRST_OPERATOR = "operator";

/** Whether an issued token's lifetime has run out at `now`. */
export const expired = (t: { readonly expiresMs?: number }, now: number): boolean =>
  t.expiresMs !== undefined && t.expiresMs <= now;

export interface Credentials {
  /** Each producer credential, bound to the one source whose rows it may append. */
  readonly producers: ReadonlyMap<ProducerSource, TokenDigest>;
  /** Grants the read tier (what a socket caller without a token has) to TCP callers. */
  readonly read?: TokenDigest;
  /** Grants the control tier, on the socket or over TCP. */
  readonly control?: TokenDigest;
  /** The tokens the daemon issued that are in force. */
  readonly issued?: readonly IssuedCredential[];
}

/**
 * The credentials in force: those the config's files hold, which the app replaces on a reload, and the
 * tokens the daemon issued, which it replaces on every mint and revocation. The tier interceptor reads
 * them on every call, so a revoked credential is refused from the next call on; what outlives one call
 * (a WatchEvents stream) listens for the replacement.
 */
export class CredentialHolder {
  private readonly listeners = new Set<(next: Credentials) => void>();
  private inForce: Credentials;

  constructor(
    private configured: Credentials,
    private issued: readonly IssuedCredential[] = [],
  ) {
    this.inForce = { ...configured, issued };
  }

  get current(): Credentials {
    return this.inForce;
  }

  /** The config's credentials, as a reload read them. */
  replace(next: Credentials): void {
    this.configured = next;
    this.publish();
  }

  /** A new control token, written to its file by `harness token rotate-control`. */
  replaceControl(control: TokenDigest): void {
    this.configured = { ...this.configured, control };
    this.publish();
  }

  /** The issued tokens in force, after a mint or a revocation. */
  replaceIssued(issued: readonly IssuedCredential[]): void {
    this.issued = issued;
    this.publish();
  }

  private publish(): void {
    const next = { ...this.configured, issued: this.issued };
    this.inForce = next;
    for (const l of [...this.listeners]) l(next);
  }

  /** Calls `listener` after every replacement until the function returned is called. */
  onReplace(listener: (next: Credentials) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export class CredentialError extends Error {
  constructor(
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`credential file ${file}: ${message}`, options);
    this.name = "CredentialError";
  }
}

export const digestToken = (token: string): TokenDigest =>
  createHash("sha256").update(token, "utf8").digest();

// A token travels in an `Authorization` header, so it must be visible ASCII without spaces.
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other header. */
export const bearerToken = (authorization: string): string | undefined =>
  /^Bearer ([^\s]+)$/.exec(authorization)?.[1];

/** Whether an `Authorization` header presents the token whose digest is `expected` (constant time). */
export function bearerMatches(authorization: string | undefined, expected: TokenDigest): boolean {
  const token = bearerToken(authorization ?? "");
  return token !== undefined && timingSafeEqual(digestToken(token), expected);
}

/**
 * The token a credential file holds, refused when the file is not a regular file, is open to group or
 * others, is larger than `MAX_TOKEN_FILE_BYTES`, or holds too short a token.
 */
export async function readTokenFile(file: string): Promise<string> {
  let content: string;
  try {
    // Stat the opened file rather than the path, so the mode checked is that of the bytes read. Opened
    // non-blocking: opening a FIFO for reading otherwise waits for a writer, and the caller hangs.
    const handle = await open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const stat = await handle.stat();
      if (!stat.isFile())
        throw new CredentialError(file, "not a regular file (a FIFO, device or directory holds no token)");
      if (stat.size > MAX_TOKEN_FILE_BYTES)
        throw new CredentialError(
          file,
          `is ${stat.size} bytes long; a token file holds at most ${MAX_TOKEN_FILE_BYTES}`,
        );
      if ((stat.mode & 0o077) !== 0)
        throw new CredentialError(
          file,
          `readable by group or others (mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}); run chmod 600 ${file}`,
        );
      content = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (e) {
    if (e instanceof CredentialError) throw e;
    throw new CredentialError(file, `cannot read it: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  const token = content.trim();
  const bytes = Buffer.byteLength(token, "utf8");
  if (bytes < MIN_TOKEN_BYTES)
    throw new CredentialError(
      file,
      `holds a token of ${bytes} bytes; a token must be at least ${MIN_TOKEN_BYTES}`,
    );
  if (!TOKEN_CHARS.test(token))
    throw new CredentialError(
      file,
      "a token must be printable ASCII without spaces (it is sent as a header)",
    );
  return token;
}

/**
 * Reads every credential file. Two credentials sharing a token are refused, since the server could not
 * tell which one a caller holds.
 */
export async function loadCredentials(files: CredentialFiles): Promise<Credentials> {
  const seen = new Map<string, string>();
  const load = async (file: string): Promise<TokenDigest> => {
    const digest = digestToken(await readTokenFile(file));
    const key = digest.toString("hex");
    const other = seen.get(key);
    if (other !== undefined)
      throw new CredentialError(
        file,
        `holds the same token as ${other}; each credential needs its own token`,
      );
    seen.set(key, file);
    return digest;
  };
  const producers = new Map<ProducerSource, TokenDigest>();
  for (const [source, file] of files.producers) producers.set(source, await load(file));
  const read = files.readTokenFile === undefined ? undefined : await load(files.readTokenFile);
  const control = files.controlTokenFile === undefined ? undefined : await load(files.controlTokenFile);
  return {
    producers,
    ...(read === undefined ? {} : { read }),
    ...(control === undefined ? {} : { control }),
  };
}

/**
 * Writes a token to `file` readable by its owner only (its directory made 0700 when missing). An
 * existing file is refused unless `replace`: it may be another credential's.
 */
export function writeTokenFile(file: string, token: string, replace = false): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (replace) {
    // A new file renamed over the old one: never a moment with the token in a file open to others.
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, `${token}\n`, { mode: 0o600, flag: "wx" });
    fs.renameSync(temp, file);
  } else fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
}

/** The operator's control token: created on the daemon's first start (0600, directory 0700), read by the CLI. */
export function ensureControlToken(file: string): void {
  if (fs.existsSync(file)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
}
