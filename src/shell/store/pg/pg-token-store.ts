/**
 * SQLite's `TokenStore` (`../token-store.ts`) on PostgreSQL: the issued tokens' digests (BYTEA, read back
 * as Buffers) and what they are bound to, never their text. Each method that is one SQLite transaction
 * is one transaction on one pooled client here.
 */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import { type IssuedTokenRow, type TokenRow, type TokenStore, tokenOf } from "../token-store.js";
import { inTransaction } from "./pg-client.js";

const INSERT = `INSERT INTO issued_tokens (id, digest, kind, source, harness, run, label, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
const REVOKE_ID = "UPDATE issued_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL";

const insertValues = (t: IssuedTokenRow) => [
  t.id,
  t.digest,
  t.kind,
  t.source ?? null,
  t.harness ?? null,
  t.run ?? null,
  t.label ?? null,
  t.createdMs,
  t.expiresMs ?? null,
];

export class PgTokenStore implements AsyncPort<TokenStore> {
  constructor(private readonly pool: pg.Pool) {}

  async insert(t: IssuedTokenRow): Promise<void> {
    await this.pool.query(INSERT, insertValues(t));
  }

  /** Every issued token, newest first. */
  async all(): Promise<IssuedTokenRow[]> {
    const r = await this.pool.query<TokenRow>("SELECT * FROM issued_tokens ORDER BY created_at DESC, id");
    return r.rows.map(tokenOf);
  }

  /** The tokens neither revoked nor expired at `now`. */
  async inForce(now: number): Promise<IssuedTokenRow[]> {
    const r = await this.pool.query<TokenRow>(
      `SELECT * FROM issued_tokens WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $1)
       ORDER BY created_at DESC, id`,
      [now],
    );
    return r.rows.map(tokenOf);
  }

  /** Revokes each id still in force, in one transaction; returns the ids it revoked. */
  revoke(ids: readonly string[], now: number): Promise<string[]> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      const revoked: string[] = [];
      for (const id of ids) if ((await client.query(REVOKE_ID, [now, id])).rowCount === 1) revoked.push(id);
      return revoked;
    });
  }

  /**
   * Spends enrolment code `code`: revokes it and inserts `tokens`, in one transaction, only if it was
   * still unrevoked. Two machines racing with one code: the second's UPDATE waits on the row the first
   * locked and, read committed, re-reads it once the first commits, finds it revoked and changes
   * nothing; so one wins (or, if the first rolls back, the second does).
   */
  redeem(code: string, tokens: readonly IssuedTokenRow[], now: number): Promise<boolean> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      if ((await client.query(REVOKE_ID, [now, code])).rowCount !== 1) return false;
      for (const t of tokens) await client.query(INSERT, insertValues(t));
      return true;
    });
  }

  /**
   * Inside the caller's transaction when `client` is given (the client its BEGIN ran on); on its own
   * otherwise: revokes the gateway tokens of `run` still unrevoked.
   */
  async revokeGatewayOfRun(run: string, now: number, client?: pg.PoolClient): Promise<void> {
    await (client ?? this.pool).query(
      "UPDATE issued_tokens SET revoked_at = $1 WHERE run = $2 AND kind = 'gateway' AND revoked_at IS NULL",
      [now, run],
    );
  }

  /**
   * The ids of the gateway tokens of `run` still unrevoked. SQLite gives them in insertion order (its
   * rowids, through the run index) without an ORDER BY; PostgreSQL has no such order, so they come in
   * id order here: the same set.
   */
  async gatewayIdsOfRun(run: string): Promise<string[]> {
    const r = await this.pool.query<{ id: string }>(
      "SELECT id FROM issued_tokens WHERE run = $1 AND kind = 'gateway' AND revoked_at IS NULL ORDER BY id",
      [run],
    );
    return r.rows.map((row) => row.id);
  }
}
