/**
 * The TUI's data layer: everything it shows comes from RuleService (REQ-17: no private path), through
 * `ConsoleReads`, which names the read-tier methods it calls, and `clear`, the one write it may make
 * (ClearHold, with the operator's control token). It keeps one WatchEvents stream open and, once the
 * stream says it is subscribed, reads what the feed missed (ListFires paged forward by `after_seq` from
 * the newest fire it holds), so that a gap in the stream or a daemon restart loses no fire from the view.
 * A failed call or a stream the daemon ends turns into "disconnected, retrying" and a reconnect with
 * backoff. The lists are refreshed on a timer; the view is told of changes at most every `throttleMs`,
 * however fast events arrive, and the feed is a bounded ring. The guards' decisions (the loop guard's
 * stops, the stale run closer's closes) are no rule's fires, so WatchEvents does not carry them: with
 * `journal` (JournalQueryService, read tier too), each refresh reads the `loop_stopped` rows and the
 * interrupted `closed` rows after the newest the feed holds; a close is the stale closer's when
 * ExplainFire of its row says so, since the closer's reason is no indexed field.
 */
import { DAY } from "../../core/durations.js";
import { parseFireId } from "../../core/fire-id.js";
import type { JournalQueryClient, RuleClient } from "../rpc/client.js";
import type {
  AnnotatedNode,
  AnnotationInfo,
  ExplainFireResponse,
  FireCount,
  FireInfo,
  GetStatusResponse,
  HoldRecord,
  ProposalInfo,
  RuleInfo,
  WatchEventsResponse,
} from "../rpc/gen/harness/v1/rules_pb.js";
import { DEFAULT_FEED_SIZE, type FeedEntry, type FeedKey, FeedRing, fireKey, guardKey } from "./feed-ring.js";

/** The RuleService methods the TUI reads through: all of the read tier. */
export type ConsoleReads = Pick<
  RuleClient,
  | "watchEvents"
  | "listFires"
  | "explainFire"
  | "listRules"
  | "listHolds"
  | "listProposals"
  | "listAnnotations"
  | "listAnnotatedNodes"
  | "countFires"
  | "getStatus"
>;

/** ClearHold with the control token, or why the TUI has none and runs read-only. */
export type HoldClearing =
  | { readonly clear: (harness: string, rule: string) => Promise<readonly string[]> }
  | { readonly readOnly: string };

/** The loop stops a first read brings into the feed: the newest of them. */
const FIRST_LOOP_STOPS = 100;
/** The interrupted closes a first read looks at, and a later read at most: each costs an ExplainFire. */
const FIRST_CLOSES = 20;
const CLOSES_PER_REFRESH = 100;

export interface ConsoleDataOptions {
  readonly reads: ConsoleReads;
  /** Where the guards' decisions are read from; without it the feed shows fires only. */
  readonly journal?: Pick<JournalQueryClient, "queryJournal">;
  readonly clearing: HoldClearing;
  /** Which daemon the console watches: its socket path or its URL (`--daemon`), shown in the status line. */
  readonly daemon?: string;
  readonly clock?: () => number;
  readonly feedSize?: number;
  /** The least time between two notifications of the view. */
  readonly throttleMs?: number;
  /** How often the lists (rules, counts, holds, status, proposals, nodes) are read again. */
  readonly refreshMs?: number;
  /** The first retry's wait, doubled each failure up to `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

export type Connection =
  | { readonly state: "connecting" }
  | { readonly state: "connected"; readonly sinceMs: number }
  | {
      readonly state: "retrying";
      readonly attempt: number;
      readonly retryAtMs: number;
      readonly error: string;
    };

/** What the views draw: one immutable value per notification. */
export interface ConsoleSnapshot {
  readonly connection: Connection;
  readonly nowMs: number;
  /** Newest first. */
  readonly feed: readonly FeedEntry[];
  readonly rules: readonly RuleInfo[];
  /** Fires per rule per hour by mode over the last 7 days. */
  readonly counts: readonly FireCount[];
  readonly holds: readonly HoldRecord[];
  readonly proposals: readonly ProposalInfo[];
  readonly nodes: readonly AnnotatedNode[];
  readonly nodesTruncated: boolean;
  readonly status: GetStatusResponse | undefined;
  /** Why `c` cannot clear a hold; undefined when it can. */
  readonly readOnly: string | undefined;
  /** Fires the catch-up reads brought that the stream had not. */
  readonly recovered: number;
  /** The daemon watched (its socket path or URL), when told. */
  readonly daemon: string | undefined;
}

/** A placed hold sits right after the fire that placed it. */
function holdKey(h: HoldRecord): FeedKey | undefined {
  const fire = parseFireId(h.hold?.fireId ?? "");
  return fire === undefined ? undefined : [fire.seq, fire.index * 2 + 1];
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class ConsoleData {
  private readonly ring: FeedRing;
  private readonly clock: () => number;
  private readonly throttleMs: number;
  private readonly refreshMs: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly listeners = new Set<() => void>();
  private readonly stopping = new AbortController();
  private connection: Connection = { state: "connecting" };
  /** The newest fire's seq the feed holds: where a catch-up read starts. Undefined before the first read. */
  private lastSeq: number | undefined;
  /** The newest loop stop's seq the feed holds; undefined before the first read. */
  private lastLoopSeq: number | undefined;
  /** The newest interrupted close's seq looked at; undefined before the first read. */
  private lastCloseSeq: number | undefined;
  /** Whether a read of the guards' decisions failed and the feed said so. */
  private guardsFailed = false;
  private extraSub = 0;
  private rules: readonly RuleInfo[] = [];
  private counts: readonly FireCount[] = [];
  private holds: readonly HoldRecord[] = [];
  private proposals: readonly ProposalInfo[] = [];
  private nodes: readonly AnnotatedNode[] = [];
  private nodesTruncated = false;
  private status: GetStatusResponse | undefined;
  private recovered = 0;
  private current: ConsoleSnapshot;
  private timer: NodeJS.Timeout | undefined;
  private lastNotify = 0;
  private refresher: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: ConsoleDataOptions) {
    this.ring = new FeedRing(options.feedSize ?? DEFAULT_FEED_SIZE);
    this.clock = options.clock ?? Date.now;
    this.throttleMs = options.throttleMs ?? 250;
    this.refreshMs = options.refreshMs ?? 2_000;
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 5_000;
    this.current = this.build();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): ConsoleSnapshot => this.current;

  /** Connects, and keeps reconnecting until `stop`. */
  start(): void {
    if (this.running !== undefined) return;
    this.running = this.run();
    this.refresher = setInterval(() => {
      if (this.connection.state === "connected") void this.refresh().catch(() => undefined);
    }, this.refreshMs);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.refresher !== undefined) clearInterval(this.refresher);
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  /** REQ-18's explanation of one fire. */
  explain(fireId: string): Promise<ExplainFireResponse> {
    return this.options.reads.explainFire({ fireId });
  }

  /** A node's annotations, newest first. */
  async annotationsOf(node: string): Promise<AnnotationInfo[]> {
    return (await this.options.reads.listAnnotations({ node, limit: 1_000 })).annotations;
  }

  /** The next page of annotated nodes, after the last one held. */
  async moreNodes(): Promise<void> {
    if (!this.nodesTruncated) return;
    const after = this.nodes[this.nodes.length - 1]?.node ?? "";
    const page = await this.options.reads.listAnnotatedNodes({ after });
    this.nodes = [...this.nodes, ...page.nodes];
    this.nodesTruncated = page.truncated;
    this.changed();
  }

  /** ClearHold for one harness's hold by one rule; the lines saying what was released. */
  async clearHold(harness: string, rule: string): Promise<readonly string[]> {
    const { clearing } = this.options;
    if ("readOnly" in clearing) throw new Error(`read-only: ${clearing.readOnly}`);
    const lines = await clearing.clear(harness, rule);
    this.holds = (await this.options.reads.listHolds({})).holds;
    this.changed();
    return lines;
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopping.signal.aborted) {
      let error: string;
      try {
        await this.session(() => {
          attempt = 0;
        });
        error = "the daemon ended the event stream (it is stopping)";
      } catch (e) {
        error = message(e);
      }
      if (this.stopping.signal.aborted) return;
      const wait = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
      attempt++;
      this.connection = { state: "retrying", attempt, retryAtMs: this.clock() + wait, error };
      this.changed();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.stopping.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
    }
  }

  /** One connection: subscribe, catch up, then follow the stream until it ends or fails. */
  private async session(onConnected: () => void): Promise<void> {
    const abort = new AbortController();
    const stopSession = () => abort.abort();
    this.stopping.signal.addEventListener("abort", stopSession, { once: true });
    try {
      const stream = this.options.reads.watchEvents({}, { signal: abort.signal })[Symbol.asyncIterator]();
      // The first message carries no event: the subscription is in place, so what the catch-up read
      // below does not return, the stream will.
      const first = await stream.next();
      if (first.done === true) throw new Error("the daemon ended the event stream at once");
      await this.catchUp();
      await this.refresh();
      this.connection = { state: "connected", sinceMs: this.clock() };
      onConnected();
      this.changed();
      for (;;) {
        const m = await stream.next();
        if (m.done === true) return;
        await this.onEvent(m.value);
      }
    } catch (e) {
      if (this.stopping.signal.aborted) return;
      throw e;
    } finally {
      this.stopping.signal.removeEventListener("abort", stopSession);
      abort.abort();
    }
  }

  private async onEvent(m: WatchEventsResponse): Promise<void> {
    const e = m.event;
    switch (e.case) {
      case "ruleFired":
        this.addFire(e.value);
        break;
      case "ruleHold":
        this.ring.add({ kind: "hold", key: holdKey(e.value) ?? this.afterNewest(), hold: e.value });
        this.holds = (await this.options.reads.listHolds({})).holds;
        break;
      case "ruleHoldReleased":
        this.ring.add({ kind: "released", key: this.afterNewest(), hold: e.value });
        this.holds = (await this.options.reads.listHolds({})).holds;
        break;
      case "gap":
        this.ring.add({
          kind: "gap",
          key: this.afterNewest(),
          missed: Number(e.value.missed),
          atMs: this.clock(),
        });
        this.changed();
        await this.catchUp();
        break;
      default:
        break;
    }
    this.changed();
  }

  private afterNewest(): FeedKey {
    this.extraSub++;
    return [this.ring.newestKey()[0], 1e9 + this.extraSub];
  }

  private addFire(f: FireInfo): boolean {
    const added = this.ring.add({ kind: "fire", key: fireKey(f), fire: f });
    const seq = Number(f.seq);
    if (this.lastSeq === undefined || seq > this.lastSeq) this.lastSeq = seq;
    return added;
  }

  /**
   * Reads the fires the feed has not seen: the newest page on the first connection, then every fire
   * after the newest held, page by page.
   */
  private async catchUp(): Promise<void> {
    const { reads } = this.options;
    if (this.lastSeq === undefined) {
      const { fires } = await reads.listFires({ limit: Math.min(1_000, this.ring.capacity) });
      for (const f of fires) this.addFire(f);
      this.lastSeq ??= 0;
      this.changed();
      return;
    }
    for (;;) {
      const page = await reads.listFires({ afterSeq: BigInt(this.lastSeq), limit: 1_000 });
      for (const f of page.fires) if (this.addFire(f)) this.recovered++;
      this.lastSeq = Math.max(this.lastSeq, Number(page.nextAfterSeq));
      this.changed();
      if (!page.truncated || this.stopping.signal.aborted) return;
    }
  }

  /** Reads the lists again; one refresh at a time. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.readLists().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readLists(): Promise<void> {
    const { reads } = this.options;
    const [rules, counts, holds, status, proposals, nodes, recent] = await Promise.all([
      reads.listRules({}),
      reads.countFires({ sinceMs: BigInt(7 * DAY) }),
      reads.listHolds({}),
      reads.getStatus({}),
      reads.listProposals({}),
      reads.listAnnotatedNodes({}),
      // The newest fires again: their actions' outcomes (delivered, undelivered and why) come after
      // the commit the stream reported.
      reads.listFires({ limit: 100 }),
    ]);
    this.rules = rules.rules;
    this.counts = counts.counts;
    this.holds = holds.holds;
    this.status = status;
    this.proposals = proposals.proposals;
    // Pages the operator asked for beyond the first are kept until the next connection.
    if (this.nodes.length <= nodes.nodes.length) {
      this.nodes = nodes.nodes;
      this.nodesTruncated = nodes.truncated;
    }
    for (const f of recent.fires) this.ring.update(f);
    await this.readGuardDecisions();
    this.changed();
  }

  /** The guards' decisions after the newest the feed holds (the newest ones, the first time). */
  private async readGuardDecisions(): Promise<void> {
    const { journal } = this.options;
    if (journal === undefined) return;
    try {
      const stops = await journal.queryJournal({
        kind: "run_event",
        type: "loop_stopped",
        ...(this.lastLoopSeq === undefined
          ? { newest: true, limit: FIRST_LOOP_STOPS }
          : { afterSeq: BigInt(this.lastLoopSeq), limit: 1_000 }),
      });
      for (const row of stops.rows) this.ring.add({ kind: "loop_stop", key: guardKey(row), row });
      this.lastLoopSeq = Math.max(this.lastLoopSeq ?? 0, Number(stops.nextAfterSeq));
      const closes = await journal.queryJournal({
        kind: "run_event",
        type: "closed",
        fields: [{ field: "outcome", value: { case: "text", value: "interrupted" } }],
        ...(this.lastCloseSeq === undefined
          ? { newest: true, limit: FIRST_CLOSES }
          : { afterSeq: BigInt(this.lastCloseSeq), limit: CLOSES_PER_REFRESH }),
      });
      for (const row of closes.rows) {
        const guard = (await this.options.reads.explainFire({ fireId: `journal:${row.seq}` })).guard;
        if (guard?.kind === "stale_closed")
          this.ring.add({ kind: "stale_close", key: guardKey(row), row, sentence: guard.sentence });
        this.lastCloseSeq = Math.max(this.lastCloseSeq ?? 0, Number(row.seq));
      }
      this.lastCloseSeq = Math.max(this.lastCloseSeq ?? 0, Number(closes.nextAfterSeq));
    } catch (e) {
      // The fires do not depend on them: the feed goes on without them, says so once, and the next
      // refresh asks again from where the last read got to.
      if (!this.guardsFailed)
        this.ring.add({
          kind: "notice",
          key: this.afterNewest(),
          text: `the guards' decisions cannot be read (QueryJournal, ExplainFire): ${message(e)}`,
          atMs: this.clock(),
        });
      this.guardsFailed = true;
    }
  }

  /** Tells the view, at most once per `throttleMs`. */
  private changed(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.lastNotify + this.throttleMs - this.clock());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastNotify = this.clock();
      this.current = this.build();
      for (const l of this.listeners) l();
    }, wait);
  }

  private build(): ConsoleSnapshot {
    const { clearing } = this.options;
    return {
      connection: this.connection,
      nowMs: this.clock(),
      feed: this.ring.newestFirst(),
      rules: this.rules,
      counts: this.counts,
      holds: this.holds,
      proposals: this.proposals,
      nodes: this.nodes,
      nodesTruncated: this.nodesTruncated,
      status: this.status,
      readOnly: "readOnly" in clearing ? clearing.readOnly : undefined,
      recovered: this.recovered,
      daemon: this.options.daemon,
    };
  }
}
