/**
 * The tokens the daemon issued (`harness token`), in the store's `issued_tokens`: each token's SHA-256
 * digest and what it is bound to, never its text. Revoking sets `revoked_at`; rows are kept so the
 * operator's list shows what was revoked and when.
 */
import type { Db } from "./open-store.js";

export const TOKEN_KINDS = ["producer", "read", "gateway", "enrolment", "control"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface IssuedTokenRow {
  readonly id: string;
  readonly digest: Buffer;
  readonly kind: TokenKind;
  readonly source?: string;
  readonly harness?: string;
  readonly run?: string;
  readonly label?: string;
  readonly createdMs: number;
  readonly expiresMs?: number;
  readonly revokedMs?: number;
}

/** A row of `issued_tokens` as both backends read it. */
export interface TokenRow {
  id: string;
  digest: Buffer;
  kind: string;
  source: string | null;
  harness: string | null;
  run: string | null;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export const tokenOf = (r: TokenRow): IssuedTokenRow => ({
  id: r.id,
  digest: r.digest,
  kind: r.kind as TokenKind,
  ...(r.source === null ? {} : { source: r.source }),
  ...(r.harness === null ? {} : { harness: r.harness }),
  ...(r.run === null ? {} : { run: r.run }),
  ...(r.label === null ? {} : { label: r.label }),
  createdMs: r.created_at,
  ...(r.expires_at === null ? {} : { expiresMs: r.expires_at }),
  ...(r.revoked_at === null ? {} : { revokedMs: r.revoked_at }),
});

export class TokenStore {
  private readonly insertRow;
  private readonly selectAll;
  private readonly selectInForce;
  private readonly revokeId;
  private readonly revokeRunStmt;
  private readonly selectRunIds;

  constructor(private readonly db: Db) {
    this.insertRow = db.prepare(
      `INSERT INTO issued_tokens (id, digest, kind, source, harness, run, label, created_at, expires_at)
       VALUES (@id, @digest, @kind, @source, @harness, @run, @label, @created_at, @expires_at)`,
    );
    this.selectAll = db.prepare<[], TokenRow>("SELECT * FROM issued_tokens ORDER BY created_at DESC, id");
    this.selectInForce = db.prepare<[number], TokenRow>(
      `SELECT * FROM issued_tokens WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY created_at DESC, id`,
    );
    this.revokeId = db.prepare<[number, string]>(
      "UPDATE issued_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    );
    this.revokeRunStmt = db.prepare<[number, string]>(
      "UPDATE issued_tokens SET revoked_at = ? WHERE run = ? AND kind = 'gateway' AND revoked_at IS NULL",
    );
    this.selectRunIds = db.prepare<[string], { id: string }>(
      "SELECT id FROM issued_tokens WHERE run = ? AND kind = 'gateway' AND revoked_at IS NULL",
    );
  }

  insert(t: IssuedTokenRow): void {
    this.insertRow.run({
      id: t.id,
      digest: t.digest,
      kind: t.kind,
      source: t.source ?? null,
      harness: t.harness ?? null,
      run: t.run ?? null,
      label: t.label ?? null,
      created_at: t.createdMs,
      expires_at: t.expiresMs ?? null,
    });
  }

  /** Every issued token, newest first. */
  all(): IssuedTokenRow[] {
    return this.selectAll.all().map(tokenOf);
  }

  /** The tokens neither revoked nor expired at `now`. */
  inForce(now: number): IssuedTokenRow[] {
    return this.selectInForce.all(now).map(tokenOf);
  }

  /** Revokes each id still in force, in one transaction; returns the ids it revoked. */
  revoke(ids: readonly string[], now: number): string[] {
    return this.db.transaction(() => ids.filter((id) => this.revokeId.run(now, id).changes > 0))();
  }

  /**
   * Spends enrolment code `code`: revokes it and inserts `tokens`, in one transaction, only if it was
   * still unrevoked (two machines racing with one code: one wins). Whether it was spent here.
   */
  redeem(code: string, tokens: readonly IssuedTokenRow[], now: number): boolean {
    return this.db.transaction(() => {
      if (this.revokeId.run(now, code).changes !== 1) return false;
      for (const t of tokens) this.insert(t);
      return true;
    })();
  }

  /** Inside the caller's transaction: revokes the gateway tokens of `run` still unrevoked. */
  revokeGatewayOfRun(run: string, now: number): void {
    this.revokeRunStmt.run(now, run);
  }

  /** The ids of the gateway tokens of `run` still unrevoked. */
  gatewayIdsOfRun(run: string): string[] {
    return this.selectRunIds.all(run).map((r) => r.id);
  }
}
