/**
 * The leader's lease on PostgreSQL (issue 35, decision 0022): one row of `harness_lease`, taken by a
 * daemon when it has lapsed, renewed by its holder every third of its length, each taking raising the
 * epoch. Its times are the database's clock, so no host's clock decides who leads. Session advisory
 * locks would break behind a pooler in transaction mode; a row does not.
 *
 * Fencing: the holder's every evaluator commit and action start reads the row under a share lock
 * (`fence`) and goes on only if the epoch is still its own. A takeover's update waits for those
 * transactions and they for it, so a commit either lands before the takeover or is refused after it: a
 * daemon paused past its lease (SIGSTOP) commits nothing when it wakes. Its own clock stops it sooner:
 * the lease counts as held only until a margin before the database would let it lapse.
 *
 * A daemon whose schema version differs from the database's refuses to lead (a rolling upgrade's older
 * daemons admit and serve, the newer lead). The connection is one of its own, held for the daemon's life:
 * it also listens for the leader's progress and for a lease given up, so followers hear both at once.
 */
import pg from "pg";
import {
  type LeaderRecord,
  type Leadership,
  type LeadershipEvents,
  LeaseLostError,
  type Progress,
} from "../leadership.js";
import { types } from "./open-pg-store.js";
import type { PgQueryable } from "./pg-client.js";

/** The database's clock, ms, read once per statement through the `now` CTE. */
const NOW = "WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)";
const PROGRESS_CHANNEL = "harness_progress";
const LEASE_CHANNEL = "harness_lease";
const ROWS_CHANNEL = "harness_rows";
const TOKENS_CHANNEL = "harness_tokens";
/** A NOTIFY payload is at most 8000 bytes; a progress is a few dozen. */
const MAX_PROGRESS_BYTES = 512;

export interface PgLeaseOptions {
  /** How long a lease lasts unrenewed, ms. */
  readonly ttlMs: number;
  /** The schema version this daemon's code writes: it leads only a database of the same. */
  readonly schemaVersion: number;
  /** A clock that never steps, ms (default `performance.now`). */
  readonly monotonic?: () => number;
}

interface LeaseRow {
  holder: string;
  epoch: number;
  since: number;
  expires_at: number;
  version: number | null;
  now: number;
}

/** A progress from the channel, or undefined when it is not one. */
export function parseProgress(payload: string | undefined): Progress | undefined {
  if (payload === undefined || payload.length > MAX_PROGRESS_BYTES) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const nat = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
  if (
    !nat(o.epoch) ||
    !nat(o.cursor) ||
    !nat(o.stored) ||
    !nat(o.at) ||
    !nat(o.fireCommits) ||
    typeof o.changed !== "boolean"
  )
    return undefined;
  return {
    epoch: o.epoch,
    cursor: o.cursor,
    stored: o.stored,
    at: o.at,
    fireCommits: o.fireCommits,
    changed: o.changed,
  };
}

export class PgLease implements Leadership {
  readonly shared = true;
  private client: pg.Client | undefined;
  private held: { readonly epoch: number; validUntil: number } | undefined;
  private events: LeadershipEvents | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set for when the lease held lapses by this daemon's clock, whatever the renewals are doing. */
  private lapseTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private why: string | undefined = "this daemon has not yet asked for the lease";
  private known: LeaderRecord | undefined;
  /** The attempts, one at a time. */
  private attempts: Promise<void> = Promise.resolve();
  private readonly monotonic: () => number;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly owner: string,
    private readonly options: PgLeaseOptions,
  ) {
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  /** Renewals and attempts run this often. */
  private get period(): number {
    return Math.max(50, Math.floor(this.options.ttlMs / 3));
  }

  /**
   * How long before the database would let the lease lapse this daemon stops counting it held: its
   * clock and the database's may run at slightly different rates, and a renewal's answer takes time.
   */
  private get margin(): number {
    return Math.min(1_000, Math.floor(this.options.ttlMs / 5));
  }

  /** The first attempt, then one every period; rejects when the database cannot be reached at all. */
  async start(events: LeadershipEvents): Promise<void> {
    this.events = events;
    await this.step();
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attempt().finally(() => this.schedule());
    }, this.period);
  }

  /** One renewal or taking, after the one under way; a failure is a lapse in the making, not a throw. */
  private attempt(): Promise<void> {
    const next = this.attempts.then(() =>
      this.step().catch((e: Error) => {
        this.dropClient();
        this.lapseIfDue(`the lease could not be renewed: ${e.message}`);
      }),
    );
    this.attempts = next;
    return next;
  }

  private async step(): Promise<void> {
    if (this.closed) return;
    const client = await this.connected();
    if (this.held === undefined) await this.take(client);
    else await this.renew(client, this.held.epoch);
  }

  private async connected(): Promise<pg.Client> {
    if (this.client !== undefined) return this.client;
    const client = new pg.Client({
      ...this.config,
      types,
      // A renewal the server leaves unanswered is given up on before the lease would lapse.
      query_timeout: this.period * 2,
      application_name: this.owner.slice(0, 63),
    });
    client.on("error", () => this.dropClient());
    client.on("notification", (n) => this.heard(n.channel, n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${PROGRESS_CHANNEL}`);
      await client.query(`LISTEN ${LEASE_CHANNEL}`);
      await client.query(`LISTEN ${ROWS_CHANNEL}`);
      await client.query(`LISTEN ${TOKENS_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    this.client = client;
    return client;
  }

  private dropClient(): void {
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => {});
  }

  private heard(channel: string, payload: string | undefined): void {
    if (this.closed) return;
    if (channel === TOKENS_CHANNEL) {
      this.events?.tokens();
      return;
    }
    if (this.held !== undefined) {
      if (channel === ROWS_CHANNEL) this.events?.rows();
      return;
    }
    if (channel === LEASE_CHANNEL) {
      // The leader gave the lease up: ask for it now, not a period later.
      void this.attempt();
      return;
    }
    const progress = parseProgress(payload);
    if (progress !== undefined) this.events?.progress(progress);
  }

  private async take(client: pg.Client): Promise<void> {
    const sent = this.monotonic();
    const r = await client.query<{ epoch: number; since: number; expires_at: number }>({
      name: "lease-take",
      text: `${NOW} UPDATE harness_lease SET epoch = epoch + 1, holder = $1, schema_version = $2,
               since = now.ms, renewed_at = now.ms, expires_at = now.ms + $3
             FROM now
             WHERE id = 1 AND (expires_at < now.ms OR holder = $1)
               AND (SELECT version FROM harness_schema WHERE id = 1) = $2
             RETURNING epoch, since, expires_at`,
      values: [this.owner, this.options.schemaVersion, this.options.ttlMs],
    });
    const taken = r.rows[0];
    if (taken === undefined) {
      this.why = this.refusal(await this.read(client));
      return;
    }
    const { epoch } = taken;
    this.known = { holder: this.owner, epoch, since: taken.since, expiresAt: taken.expires_at };
    this.held = { epoch, validUntil: sent + this.options.ttlMs - this.margin };
    this.armLapse();
    this.why = undefined;
    this.events?.lead(epoch);
  }

  private async renew(client: pg.Client, epoch: number): Promise<void> {
    const sent = this.monotonic();
    const r = await client.query({
      name: "lease-renew",
      text: `${NOW} UPDATE harness_lease SET renewed_at = now.ms, expires_at = now.ms + $3
             FROM now
             WHERE id = 1 AND epoch = $4 AND holder = $1
               AND (SELECT version FROM harness_schema WHERE id = 1) = $2`,
      values: [this.owner, this.options.schemaVersion, this.options.ttlMs, epoch],
    });
    const held = this.held;
    if (held === undefined || held.epoch !== epoch) return;
    if (r.rowCount === 1) {
      // A renewal answered after the lease already lapsed here does not bring it back: the daemon has
      // been told to follow, and takes the lease again, with a new epoch, like any other.
      if (this.monotonic() < held.validUntil) {
        held.validUntil = sent + this.options.ttlMs - this.margin;
        this.armLapse();
      } else this.lapseIfDue("the lease lapsed before its renewal was answered");
      return;
    }
    this.lose(this.refusal(await this.read(client)));
  }

  /** The row as it stands, with the schema's version and the database's clock. */
  private async read(db: PgQueryable): Promise<LeaseRow> {
    const r = await db.query<LeaseRow>(
      `${NOW} SELECT l.holder, l.epoch, l.since, l.expires_at,
                (SELECT version FROM harness_schema WHERE id = 1) AS version, now.ms AS now
              FROM harness_lease l, now WHERE l.id = 1`,
    );
    const row = r.rows[0];
    if (row === undefined) throw new Error("harness_lease has no row");
    return row;
  }

  /** Why this daemon does not lead, given the row (which is then the leader last known). */
  private refusal(row: LeaseRow): string {
    this.known = this.recordOf(row);
    if (row.version !== this.options.schemaVersion)
      return `the database's schema version ${row.version ?? "none"} differs from this daemon's (${this.options.schemaVersion}): it does not lead`;
    if (row.holder === this.owner) return "this daemon's lease lapsed";
    return `${row.holder || "another daemon"} leads (epoch ${row.epoch})`;
  }

  /** A renewal hung on the server must not keep this daemon leading past its lease. */
  private armLapse(): void {
    const held = this.held;
    if (held === undefined) return;
    if (this.lapseTimer !== undefined) clearTimeout(this.lapseTimer);
    this.lapseTimer = setTimeout(
      () => {
        this.lapseTimer = undefined;
        // A timer may fire a moment early by the monotonic clock: then it waits the rest.
        if (this.held !== undefined && this.monotonic() < this.held.validUntil) this.armLapse();
        else this.lapseIfDue("the lease lapsed: its renewals went unanswered");
      },
      Math.max(0, held.validUntil - this.monotonic()),
    );
  }

  /** Stops leading if the lease has lapsed by this daemon's clock. */
  private lapseIfDue(reason: string): void {
    const held = this.held;
    if (held !== undefined && this.monotonic() >= held.validUntil) this.lose(reason);
  }

  private lose(reason: string): void {
    if (this.held === undefined) return;
    this.held = undefined;
    if (this.lapseTimer !== undefined) clearTimeout(this.lapseTimer);
    this.why = reason;
    this.events?.follow(reason);
  }

  get epoch(): number | undefined {
    const held = this.held;
    return held !== undefined && this.monotonic() < held.validUntil ? held.epoch : undefined;
  }

  get notLeading(): string | undefined {
    return this.held === undefined ? this.why : undefined;
  }

  /**
   * Inside a transaction, before its writes: the row read under a share lock, so no takeover lands
   * until the transaction ends; throws `LeaseLostError` (rolling it back) unless the epoch is still this
   * daemon's and its lease has not lapsed by its own clock.
   */
  async fence(client: PgQueryable): Promise<void> {
    const epoch = this.epoch;
    if (epoch === undefined) {
      this.lapseIfDue("the lease lapsed before it was renewed");
      throw new LeaseLostError(`this daemon does not lead: ${this.why ?? "its lease lapsed"}`);
    }
    const r = await client.query<{ epoch: number; holder: string }>({
      name: "lease-fence",
      text: "SELECT epoch, holder FROM harness_lease WHERE id = 1 FOR SHARE",
    });
    const row = r.rows[0];
    if (Number(row?.epoch) !== epoch) {
      this.lose(`${row?.holder || "another daemon"} took the lease (epoch ${row?.epoch ?? "?"})`);
      throw new LeaseLostError(
        `this daemon's lease (epoch ${epoch}) was taken over (epoch ${row?.epoch ?? "?"}): nothing committed`,
      );
    }
  }

  private recordOf(row: LeaseRow): LeaderRecord | undefined {
    return row.epoch === 0
      ? undefined
      : { holder: row.holder, epoch: row.epoch, since: row.since, expiresAt: row.expires_at };
  }

  async leader(): Promise<LeaderRecord | undefined> {
    this.known = this.recordOf(await this.read(await this.connected()));
    return this.known;
  }

  get lastKnown(): LeaderRecord | undefined {
    return this.known;
  }

  announce(progress: Progress): void {
    const client = this.client;
    if (client === undefined || this.held === undefined) return;
    client.query("SELECT pg_notify($1, $2)", [PROGRESS_CHANNEL, JSON.stringify(progress)]).catch(() => {});
  }

  /** Whether a rows notification is on its way, and whether another is wanted after it. */
  private rowsTelling: "idle" | "sending" | "again" = "idle";

  /** At most one notification on its way: commits meanwhile are told by the next. */
  rowsCommitted(): void {
    if (this.held !== undefined) return;
    if (this.rowsTelling !== "idle") {
      this.rowsTelling = "again";
      return;
    }
    const client = this.client;
    if (client === undefined) return;
    this.rowsTelling = "sending";
    client
      .query(`NOTIFY ${ROWS_CHANNEL}`)
      .catch(() => {})
      .finally(() => {
        const again = this.rowsTelling === "again";
        this.rowsTelling = "idle";
        if (again) this.rowsCommitted();
      });
  }

  /** Told on the lease's connection; one lost with it is made up by the daemons' periodic reread. */
  tokensChanged(): void {
    this.client?.query(`NOTIFY ${TOKENS_CHANNEL}`).catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.lapseTimer !== undefined) clearTimeout(this.lapseTimer);
    await this.attempts;
    const held = this.held;
    this.held = undefined;
    const client = this.client;
    if (client !== undefined && held !== undefined)
      // Given up at once, and said so: a follower takes it without waiting for it to lapse.
      await client
        .query("UPDATE harness_lease SET expires_at = 0 WHERE id = 1 AND epoch = $1 AND holder = $2", [
          held.epoch,
          this.owner,
        ])
        .then(() => client.query(`NOTIFY ${LEASE_CHANNEL}`))
        .catch(() => {});
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
