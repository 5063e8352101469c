/**
 * The tokens the daemon issues (`harness token`, TokenService): minted here, kept in the store as
 * digests (`store/token-store.ts`), and handed to the credentials in force after every change, so a
 * token minted is accepted, and one revoked refused, from the next call on. Gateway tokens grant no RPC
 * tier; the MCP gateway asks `identify` who holds one. An enrolment code (docs/fleet.md) grants one call,
 * `TokenService.Enrol`, once: it is spent for its harness's two producer tokens.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { textProblem } from "../../core/admission.js";
import { MAX_IDENT } from "../../core/kinds.js";
import { isProducerSource, PRODUCER_SOURCES, type ProducerSource } from "../../core/sources.js";
import { InvalidArgumentError } from "../errors.js";
import type { StoreDoor } from "../store/store-door.js";
import type { IssuedTokenRow, TokenKind } from "../store/token-store.js";
import { Turns } from "../support/turns.js";
import { digestToken, expired, FIRST_OPERATOR, type IssuedCredential } from "./credentials.js";

export type { TokenKind } from "../store/token-store.js";

/** What a token is minted for. */
export interface TokenRequest {
  readonly kind: TokenKind;
  readonly source?: string;
  readonly harness?: string;
  readonly run?: string;
  readonly label?: string;
  readonly ttlMs?: number;
}

/** An issued token as the operator may see it: never its text or digest. */
export type IssuedToken = Omit<IssuedTokenRow, "digest">;

/** The longest lifetime a token may be minted with: a year. */
export const MAX_TOKEN_TTL_MS = 366 * 24 * 3600 * 1000;
/** An enrolment code's lifetime unless told, and its longest: a code is for a machine being set up now. */
export const ENROLMENT_TTL_MS = 3600 * 1000;
export const MAX_ENROLMENT_TTL_MS = 7 * 24 * 3600 * 1000;

/** The producer tokens an enrolment code was spent for, with their text: shown this once. */
export interface Enrolment {
  readonly harness: string;
  readonly observer: { readonly id: string; readonly token: string };
  readonly ledger: { readonly id: string; readonly token: string };
}

const bad = (message: string) => new InvalidArgumentError("", message);

function checkIdent(what: string, value: string | undefined): void {
  if (value === undefined) return;
  if (value === "") throw bad(`${what} must not be empty`);
  if ([...value].length > MAX_IDENT) throw bad(`${what} holds at most ${MAX_IDENT} characters`);
  // These end up in rows, logs and terminals: held to what admission allows a row's fields.
  const problem = textProblem(value);
  if (problem !== undefined) throw bad(`${what} ${problem.message}`);
}

/** Refuses (invalid_argument) a request missing what its kind needs, or carrying what it may not. */
function checkRequest(r: TokenRequest): void {
  checkIdent("harness", r.harness);
  checkIdent("run", r.run);
  checkIdent("label", r.label);
  if (r.ttlMs !== undefined && (!Number.isSafeInteger(r.ttlMs) || r.ttlMs <= 0 || r.ttlMs > MAX_TOKEN_TTL_MS))
    throw bad(`the lifetime must be a positive duration of at most 366 days`);
  switch (r.kind) {
    case "producer":
      if (r.source === undefined || !isProducerSource(r.source))
        throw bad(
          `a producer token needs its source, one of ${PRODUCER_SOURCES.join(", ")} (got ${JSON.stringify(r.source ?? "")})`,
        );
      if (r.run !== undefined) throw bad("a producer token is not bound to a run");
      return;
    case "read":
      if (r.source !== undefined || r.harness !== undefined || r.run !== undefined)
        throw bad("a read token takes no source, harness or run");
      return;
    case "gateway":
      if (r.source !== undefined) throw bad("a gateway token takes no source");
      if (r.harness === undefined) throw bad("a gateway token needs its harness");
      return;
    case "control":
      if (r.source !== undefined || r.harness !== undefined || r.run !== undefined)
        throw bad("an operator's control token takes no source, harness or run");
      if (r.label === undefined)
        throw bad("an operator's control token needs its label, the operator's name");
      if (r.label === FIRST_OPERATOR)
        throw bad(`the label ${FIRST_OPERATOR} is the first control token's; give the operator's own name`);
      return;
    case "enrolment":
      if (r.source !== undefined || r.run !== undefined)
        throw bad("an enrolment code takes no source or run");
      if (r.harness === undefined) throw bad("an enrolment code needs the harness it enrols");
      if (r.ttlMs !== undefined && r.ttlMs > MAX_ENROLMENT_TTL_MS)
        throw bad("an enrolment code lives at most 7 days");
      return;
  }
}

/** A new token: 32 random bytes, base64url, behind a prefix that secret scanners can recognise. */
export const mintText = (): string => `hrt_${randomBytes(32).toString("base64url")}`;
const mintId = (): string => `tk_${randomBytes(6).toString("hex")}`;

const credentialOf = (t: IssuedTokenRow): IssuedCredential => ({
  id: t.id,
  digest: t.digest,
  kind: t.kind,
  ...(t.source === undefined ? {} : { source: t.source as ProducerSource }),
  ...(t.harness === undefined ? {} : { harness: t.harness }),
  ...(t.run === undefined ? {} : { run: t.run }),
  ...(t.kind === "control" && t.label !== undefined ? { label: t.label } : {}),
  ...(t.expiresMs === undefined ? {} : { expiresMs: t.expiresMs }),
});

const withoutDigest = ({ digest: _digest, ...rest }: IssuedTokenRow): IssuedToken => rest;

/** A new token's row and text. */
function minted(
  request: TokenRequest,
  now: number,
): { readonly row: IssuedTokenRow; readonly token: string } {
  const token = mintText();
  return {
    token,
    row: {
      id: mintId(),
      digest: digestToken(token),
      kind: request.kind,
      ...(request.source === undefined ? {} : { source: request.source }),
      ...(request.harness === undefined ? {} : { harness: request.harness }),
      ...(request.run === undefined ? {} : { run: request.run }),
      ...(request.label === undefined ? {} : { label: request.label }),
      createdMs: now,
      ...(request.ttlMs === undefined ? {} : { expiresMs: now + request.ttlMs }),
    },
  };
}

export class IssuedTokens {
  private inForce: readonly IssuedTokenRow[];
  private inForceCredentials: readonly IssuedCredential[];
  private readonly listeners = new Set<(inForce: readonly IssuedCredential[]) => void>();
  /**
   * Mints, enrolments and revocations, one at a time: a mint checks the tokens in force as the change
   * before it left them (two control tokens minted at once with one label would both pass the check
   * otherwise), and a run's gateway tokens are revoked as they were when their ids were read.
   */
  private readonly changes = new Turns();
  /** Reads of the tokens in force, numbered as asked, and the latest whose answer was taken. */
  private changedHere: () => void = () => {};
  private asked = 0;
  private taken = 0;

  private constructor(
    private readonly store: StoreDoor["tokens"],
    private readonly clock: () => number,
    inForce: readonly IssuedTokenRow[],
  ) {
    this.inForce = inForce;
    this.inForceCredentials = inForce.map(credentialOf);
  }

  /**
   * The tokens issued, read from the store before the daemon serves: the credentials read them
   * synchronously on every call.
   */
  static async open(
    store: StoreDoor["tokens"],
    clock: () => number,
    /** Told after each mint, enrolment and revocation here: other daemons on the store read them again. */
    changedHere: () => void = () => {},
  ): Promise<IssuedTokens> {
    const tokens = new IssuedTokens(store, clock, await store.inForce(clock()));
    tokens.changedHere = changedHere;
    return tokens;
  }

  /**
   * The tokens in force, as credentials. One that expired since the last change is still listed: the
   * tier check and `identify` compare its expiry with the time of each call.
   */
  get credentials(): readonly IssuedCredential[] {
    return this.inForceCredentials;
  }

  /** Calls `listener` with the tokens in force after every mint and revocation. */
  onChange(listener: (inForce: readonly IssuedCredential[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Mints a token and puts it in force; its text is returned here and nowhere else. */
  create(request: TokenRequest): Promise<{ readonly id: string; readonly token: string }> {
    return this.changes.run(async () => {
      checkRequest(request);
      const now = this.clock();
      // A label names one operator: two control tokens in force with one label could not be told apart.
      if (
        request.kind === "control" &&
        this.inForce.some((t) => t.kind === "control" && t.label === request.label && !expired(t, now))
      )
        throw bad(
          `a control token labelled ${request.label} is in force; revoke it first, or choose another label`,
        );
      const ttlMs = request.ttlMs ?? (request.kind === "enrolment" ? ENROLMENT_TTL_MS : undefined);
      const { row, token } = minted({ ...request, ...(ttlMs === undefined ? {} : { ttlMs }) }, now);
      await this.store.insert(row);
      this.changedHere();
      await this.refresh(now);
      return { id: row.id, token };
    });
  }

  /**
   * Spends enrolment code `codeId` (the caller presented it, so it was in force) for two producer tokens
   * bound to its harness, observer and ledger, as `harness agents install` would mint them; undefined
   * when it is spent, revoked or expired meanwhile.
   */
  enrol(codeId: string, forHarness: string): Promise<Enrolment | undefined> {
    return this.changes.run(async () => {
      const now = this.clock();
      const code = this.inForce.find((t) => t.id === codeId && t.kind === "enrolment");
      const harness = code?.harness;
      if (code === undefined || harness === undefined || expired(code, now)) return undefined;
      if (forHarness !== harness)
        throw bad(`the enrolment code is for harness ${harness}, not ${forHarness}; it is left unspent`);
      const label = `agents ${harness} (enrolled with ${code.id}${code.label === undefined ? "" : `, ${code.label}`})`;
      const make = (source: "observer" | "ledger") =>
        minted({ kind: "producer", source, harness, label: label.slice(0, MAX_IDENT) }, now);
      const observer = make("observer");
      const ledger = make("ledger");
      // One store call: the code is spent only if it was still unrevoked, whoever else spends it.
      if (!(await this.store.redeem(code.id, [observer.row, ledger.row], now))) return undefined;
      this.changedHere();
      await this.refresh(now);
      return {
        harness,
        observer: { id: observer.row.id, token: observer.token },
        ledger: { id: ledger.row.id, token: ledger.token },
      };
    });
  }

  /** Every issued token, newest first; revoked and expired ones only when asked. */
  async list(includeRevoked: boolean): Promise<IssuedToken[]> {
    const now = this.clock();
    return (includeRevoked ? await this.store.all() : await this.store.inForce(now)).map(withoutDigest);
  }

  /** Revokes these ids; returns those it revoked (an unknown or already revoked id is left out). */
  revoke(ids: readonly string[]): Promise<string[]> {
    return this.changes.run(() => this.revoked(ids));
  }

  /** Revokes every gateway token bound to `run`: the run has closed, so they are worth nothing. */
  revokeRun(run: string): Promise<string[]> {
    return this.changes.run(async () => this.revoked(await this.store.gatewayIdsOfRun(run)));
  }

  /**
   * Reads the tokens in force again, after a commit elsewhere revoked some (`derive/closed-run-tokens.ts`).
   * Rejects when the store cannot be read; the tokens in force stay as they were.
   */
  reread(): Promise<void> {
    return this.refresh(this.clock());
  }

  /**
   * The token in force that `token` is, or undefined. Every digest is compared, in constant time and
   * without stopping at a match.
   */
  identify(token: string): IssuedToken | undefined {
    const digest = digestToken(token);
    const now = this.clock();
    let found: IssuedTokenRow | undefined;
    for (const t of this.inForce)
      if (timingSafeEqual(t.digest, digest) && found === undefined && !expired(t, now)) found = t;
    return found === undefined ? undefined : withoutDigest(found);
  }

  private async revoked(ids: readonly string[]): Promise<string[]> {
    const now = this.clock();
    const revoked = await this.store.revoke(ids, now);
    if (revoked.length > 0) {
      this.changedHere();
      await this.refresh(now);
    }
    return revoked;
  }

  /**
   * Reads the tokens in force and hands them out. Reads overlap (a mint's and a closed run's): the
   * answer of one asked before another that was taken already is dropped, since it could hold tokens
   * the later read found revoked. A dropped read's change is in the later one, asked after it was made.
   */
  private async refresh(now: number): Promise<void> {
    const read = ++this.asked;
    const inForce = await this.store.inForce(now);
    if (read < this.taken) return;
    this.taken = read;
    this.inForce = inForce;
    this.inForceCredentials = inForce.map(credentialOf);
    for (const l of [...this.listeners]) l(this.inForceCredentials);
  }
}
