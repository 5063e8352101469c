/**
 * One daemon per database (issue 34; issue 35 replaces this with a lease carrying a fencing epoch, so
 * that several daemons can share one): a session advisory lock, held on a connection of its own for the
 * daemon's life. SQLite's lock file does the same job for the file (`../store-lock.ts`). A second
 * daemon started on the same database is refused at its start, naming the holder as the server knows
 * it (its `application_name` and address).
 *
 * The server drops a session's locks with the session: when the connection is lost (the database
 * restarted, the network went), the lock is taken again once the server answers; if another daemon
 * took it meanwhile, `onLost` is told, and the daemon must stop evaluating and acting.
 */
import pg from "pg";

/** The lock's two keys ("hars", 1): fixed, so every harness daemon asks for the same lock. */
const KEYS = [0x68617273, 1] as const;
/** How often a lost lock is asked for again while the server does not answer. */
const RETAKE_MS = 1_000;

export class PgDaemonLockError extends Error {
  constructor(
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`store ${store}: ${message}`, options);
    this.name = "PgDaemonLockError";
  }
}

/** Who holds the lock, as the server knows them; undefined when nobody does. */
async function holder(client: pg.ClientBase): Promise<string | undefined> {
  const r = await client.query<{ application_name: string; client_addr: string | null; pid: number }>(
    `SELECT a.application_name, a.client_addr::text AS client_addr, a.pid FROM pg_locks l
       JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2 AND l.granted`,
    [...KEYS],
  );
  const h = r.rows[0];
  if (h === undefined) return undefined;
  return `${h.application_name || "a client"} (server pid ${h.pid}${h.client_addr === null ? ", on the socket" : `, from ${h.client_addr}`})`;
}

export class PgDaemonLock {
  private client: pg.Client | undefined;
  private closed = false;
  private retake: NodeJS.Timeout | undefined;

  private constructor(
    private readonly config: pg.ClientConfig,
    private readonly store: string,
    private readonly onLost: (e: PgDaemonLockError) => void,
  ) {}

  /**
   * Takes the lock or throws `PgDaemonLockError` naming who holds it. `owner` names this daemon to
   * another one refused (the connection's `application_name`).
   */
  static async acquire(
    config: pg.ClientConfig,
    store: string,
    owner: string,
    onLost: (e: PgDaemonLockError) => void,
  ): Promise<PgDaemonLock> {
    const lock = new PgDaemonLock(
      // The server keeps 63 bytes of an application_name.
      { ...config, application_name: owner.slice(0, 63) },
      store,
      onLost,
    );
    await lock.take();
    return lock;
  }

  /** One attempt: connected and locked, or a `PgDaemonLockError` when another holds it. */
  private async take(): Promise<void> {
    const client = new pg.Client(this.config);
    // Heard while held; a lost session is what `retakeSoon` answers.
    client.on("error", () => {});
    try {
      await client.connect();
      const r = await client.query<{ taken: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS taken", [
        ...KEYS,
      ]);
      if (r.rows[0]?.taken !== true) {
        const who = (await holder(client).catch(() => undefined)) ?? "another session";
        throw new PgDaemonLockError(
          this.store,
          `another harness daemon runs on this database: ${who}; one daemon per database until issue 35's failover`,
        );
      }
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    client.once("end", () => {
      if (this.client === client) this.client = undefined;
      this.retakeSoon();
    });
  }

  private retakeSoon(): void {
    if (this.closed || this.retake !== undefined) return;
    this.retake = setTimeout(() => {
      this.retake = undefined;
      this.take().catch((e: Error) => {
        if (e instanceof PgDaemonLockError) this.onLost(e);
        else this.retakeSoon();
      });
    }, RETAKE_MS);
  }

  /** Whether the lock is held now (false while the server is away and the lock is being taken again). */
  get held(): boolean {
    return this.client !== undefined;
  }

  async release(): Promise<void> {
    this.closed = true;
    if (this.retake !== undefined) clearTimeout(this.retake);
    const client = this.client;
    this.client = undefined;
    // Ending the session releases its locks.
    await client?.end().catch(() => {});
  }
}
