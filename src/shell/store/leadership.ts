/**
 * Who evaluates and acts (issue 35, decision 0022). Every daemon on a store admits and serves reads;
 * one at a time leads: it evaluates, acts, ticks, derives and prunes. On SQLite the file's lock already
 * makes its one daemon the leader for its life (`SoleLeadership`); on PostgreSQL a lease row with a
 * fencing epoch decides (`pg/pg-lease.ts`). Followers hear from the leader how far it has evaluated
 * (`Progress`), so a hook call they admitted can wait for its row's evaluation.
 */

/** The leader as the store records it. */
export interface LeaderRecord {
  /** The leading daemon as it names itself: `harness daemon (pid N on HOST)`. */
  readonly holder: string;
  /** Raised by each takeover: a commit or action start of an earlier epoch is refused. */
  readonly epoch: number;
  /** When this epoch began, ms (the store's clock). */
  readonly since: number;
  /** When the lease lapses unless renewed, ms (the store's clock); undefined where it never does. */
  readonly expiresAt: number | undefined;
}

/** How far the leader has evaluated, told to followers after each of its passes. */
export interface Progress {
  readonly epoch: number;
  /** The last row whose decisions are committed. */
  readonly cursor: number;
  /**
   * The cursor in the store (quiet rows' cursor is stored a moment after them): a follower's window
   * index tails up to it, since the leader that takes over starts from it.
   */
  readonly stored: number;
  /** That row's `at`. */
  readonly at: number;
  /** How many of the leader's commits since its start stored fires (a follower's telling reads it). */
  readonly fireCommits: number;
  /** Whether decisions were committed since the last progress told: a follower rereads the state. */
  readonly changed: boolean;
}

export interface LeadershipEvents {
  /** This daemon now leads in `epoch`. */
  lead(epoch: number): void;
  /** This daemon no longer leads: `reason` says why. */
  follow(reason: string): void;
  /** The leader's progress (followers only). */
  progress(p: Progress): void;
  /** A follower committed rows (the leader only): they wait for evaluation. */
  rows(): void;
  /** A daemon on the store minted, enrolled or revoked tokens: the issued tokens are to be read again. */
  tokens(): void;
}

/** Thrown by a commit or action start of a daemon that does not lead (or no longer does). */
export class LeaseLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LeaseLostError";
  }
}

export interface Leadership {
  /** Whether other daemons may share the store (role changes are then worth a log line). */
  readonly shared: boolean;
  /** Starts; resolves once this daemon's first role is decided (`events.lead` called if it leads). */
  start(events: LeadershipEvents): Promise<void>;
  /** The epoch this daemon leads in, or undefined when it does not lead. */
  readonly epoch: number | undefined;
  /** Why this daemon does not lead, when it does not: another leads, or its schema version differs. */
  readonly notLeading: string | undefined;
  /** The leader as the store records it now; undefined when none ever led. */
  leader(): Promise<LeaderRecord | undefined>;
  /** The leader as this daemon last read it (at most a renewal period old), for metrics. */
  readonly lastKnown: LeaderRecord | undefined;
  /** The leader tells its followers how far it has evaluated; nothing waits for it. */
  announce(progress: Progress): void;
  /** A follower tells the leader it committed rows; nothing waits for it. */
  rowsCommitted(): void;
  /** This daemon changed the issued tokens: the others read them again. Nothing waits for it. */
  tokensChanged(): void;
  /** Gives the lease up (followers may take it at once) and stops. */
  close(): Promise<void>;
}

/** SQLite's: the daemon holding the file's lock leads from its start to its close. */
export class SoleLeadership implements Leadership {
  readonly shared = false;
  private record: LeaderRecord | undefined;

  constructor(
    private readonly holder: string,
    private readonly clock: () => number,
  ) {}

  async start(events: LeadershipEvents): Promise<void> {
    this.record = { holder: this.holder, epoch: 1, since: this.clock(), expiresAt: undefined };
    events.lead(1);
  }

  get epoch(): number | undefined {
    return this.record?.epoch;
  }

  get notLeading(): string | undefined {
    return undefined;
  }

  async leader(): Promise<LeaderRecord | undefined> {
    return this.record;
  }

  get lastKnown(): LeaderRecord | undefined {
    return this.record;
  }

  announce(): void {}

  rowsCommitted(): void {}

  tokensChanged(): void {}

  async close(): Promise<void> {}
}
