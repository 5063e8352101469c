/**
 * The two producer tokens a hook holds (observer for tool and mark rows, ledger for opened and closed;
 * both bound to the harness, so they append that harness's rows only), minted and revoked by the daemon's
 * `harness.v1.TokenService` with the operator's control token, and kept in files only the operator can
 * read. Everything install and uninstall need of the token service goes through `TokenIssuer`.
 */
import * as fs from "node:fs";
import type { ProducerRole } from "./agent-paths.js";

export interface MintedToken {
  readonly id: string;
  readonly token: string;
}

export interface TokenIssuer {
  /** A producer token for `source`, bound to `harness`. */
  mint(source: ProducerRole, harness: string, label: string): Promise<MintedToken>;
  /** Revokes the tokens; how many were still live. */
  revoke(ids: readonly string[]): Promise<number>;
  /** Which of these ids the daemon still accepts (not revoked, not expired). */
  inForce(ids: readonly string[]): Promise<ReadonlySet<string>>;
}

/** A token file's token (surrounding whitespace ignored), undefined when there is no such file. */
export function readTokenIfPresent(file: string): string | undefined {
  try {
    // A FIFO in its place would hold the install on a read that never ends.
    if (!fs.statSync(file).isFile()) throw new Error(`${file} is not a regular file; a token file is one`);
    const token = fs.readFileSync(file, "utf8").trim();
    return token === "" ? undefined : token;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}
