/**
 * The command forwarder's spool: hook calls that could not reach the daemon, waiting under
 * `$XDG_STATE_HOME/harness/agents/spool/` (0700; files 0600) to be delivered, in order, before new rows
 * by the next call that reaches it.
 *
 * Files, for `harness doctor` and the operator:
 * - `<time>-<pid>-<n>.json`, one call each: `{"v":1, adapter, harness, observer_token_file,
 *   ledger_token_file, at, key, tries, payload}`, and for a remote install `daemon` (its URL and TLS
 *   files) and `facts` (the git facts computed when the call was made). `payload` holds only what a row is built from
 *   (`rowPayload`): the ids, the tool's name and input, never a prompt or the tool's output. `key` is
 *   the call's idempotency key (`hook-key.ts`), sent with its live request too; `tries` counts the
 *   deliveries that timed out or failed in the daemon. The spool's depth is the number of these.
 *   Names sort in the order the calls were made.
 * - `overflow`: how many calls were not spooled because the spool was full (a decimal number, absent
 *   when none).
 * - `failed/`: entries the daemon refused (bad payload, a credential it no longer accepts), kept for
 *   the operator rather than retried forever.
 * - `set-aside/`: entries whose delivery failed `MAX_TRIES` times (timed out, or a 5xx): kept for the
 *   operator (`harness agents spool list|retry|drop`), so that one call the daemon cannot take never
 *   holds up the calls behind it.
 * - `.drain.lock`: held by the call delivering the spool.
 *
 * Bounded: at most `MAX_SPOOL_ENTRIES` entries and `MAX_SPOOL_BYTES` bytes; beyond, calls are counted
 * in `overflow` and dropped. Node built-ins only: the forwarder's import graph stays small.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { SuppliedFacts } from "../ingest/supplied-facts.js";

export const MAX_SPOOL_ENTRIES = 1000;
export const MAX_SPOOL_BYTES = 32 * 1024 * 1024;
/** Failed deliveries (a timeout, a 5xx) after which an entry is set aside. */
export const MAX_TRIES = 3;
/** A drain lock older than this was left by a call that died: taken over. */
const STALE_LOCK_MS = 30_000;

export interface SpoolEntry {
  readonly v: 1;
  readonly adapter: string;
  readonly harness: string;
  readonly observer_token_file: string;
  readonly ledger_token_file: string;
  /** When the hook received the call, ms since the epoch. */
  readonly at: number;
  /** The call's idempotency key; entries spooled before keys were sent have none (see `keyOf`). */
  readonly key?: string;
  /** Deliveries that failed in the daemon (a timeout, a 5xx); absent for none. */
  readonly tries?: number;
  readonly payload: unknown;
  /** A remote install's daemon (decision 0017): delivered there over https, not to the socket. */
  readonly daemon?: {
    readonly url: string;
    readonly ca_file?: string;
    readonly client_cert?: string;
    readonly client_key?: string;
  };
  /** The git facts computed on this machine when the call was made, sent with it. */
  readonly facts?: SuppliedFacts;
}

/** Where an entry is: waiting, set aside after `MAX_TRIES` failures, or refused by the daemon. */
export type SpoolPlace = "waiting" | "set-aside" | "failed";
const SUBDIR: Readonly<Record<SpoolPlace, string>> = {
  waiting: "",
  "set-aside": "set-aside",
  failed: "failed",
};

/** An entry's idempotency key: its own, or (spooled by an older forwarder) its name. */
export const keyOf = (name: string, entry: SpoolEntry): string => entry.key ?? name.replace(/\.json$/, "");

const ENTRY = /^\d{15}-\d+-\d+\.json$/;
let counter = 0;

export class Spool {
  constructor(readonly dir: string) {}

  /** The names of the entries in `place` (waiting unless said), oldest first. */
  entries(place: SpoolPlace = "waiting"): string[] {
    try {
      return fs
        .readdirSync(path.join(this.dir, SUBDIR[place]))
        .filter((f) => ENTRY.test(f))
        .sort();
    } catch {
      return [];
    }
  }

  overflowCount(): number {
    try {
      const n = Number(fs.readFileSync(path.join(this.dir, "overflow"), "utf8").trim());
      return Number.isSafeInteger(n) && n > 0 ? n : 0;
    } catch {
      return 0;
    }
  }

  /** Spools `entry`; false (and counted in `overflow`) when the spool is full. */
  add(entry: SpoolEntry): boolean {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const text = JSON.stringify(entry);
    const names = this.entries();
    let bytes = 0;
    for (const name of names) bytes += fileSize(path.join(this.dir, name));
    if (names.length >= MAX_SPOOL_ENTRIES || bytes + Buffer.byteLength(text) > MAX_SPOOL_BYTES) {
      this.countOverflow();
      return false;
    }
    const name = `${String(entry.at).padStart(15, "0")}-${process.pid}-${counter++}.json`;
    // Written aside and renamed, so a drain never reads half an entry.
    const tmp = path.join(this.dir, `.${name}.tmp`);
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, path.join(this.dir, name));
    return true;
  }

  read(name: string, place: SpoolPlace = "waiting"): SpoolEntry | undefined {
    try {
      const e = JSON.parse(fs.readFileSync(path.join(this.dir, SUBDIR[place], name), "utf8")) as SpoolEntry;
      return e.v === 1 && typeof e.adapter === "string" && typeof e.harness === "string" ? e : undefined;
    } catch {
      return undefined;
    }
  }

  /** Delivered: gone. */
  remove(name: string): void {
    fs.rmSync(path.join(this.dir, name), { force: true });
  }

  /** Refused by the daemon or unreadable: kept in `failed/` for the operator. */
  fail(name: string): void {
    if (!this.move(name, "waiting", "failed")) this.remove(name);
  }

  /**
   * Counts a failed delivery of a waiting entry; at `MAX_TRIES` it is set aside. The count is written
   * aside and renamed over the entry, so a kill leaves the old count or the new, never half an entry.
   * Whether it was set aside.
   */
  countTry(name: string, entry: SpoolEntry): boolean {
    const tries = (entry.tries ?? 0) + 1;
    if (tries >= MAX_TRIES) {
      this.rewrite(name, "waiting", { ...entry, tries });
      this.move(name, "waiting", "set-aside");
      return true;
    }
    this.rewrite(name, "waiting", { ...entry, tries });
    return false;
  }

  /** An entry set aside or refused, back in the spool with no tries counted: the next call delivers it. */
  retry(name: string, from: Exclude<SpoolPlace, "waiting">): boolean {
    const entry = ENTRY.test(name) ? this.read(name, from) : undefined;
    if (entry === undefined) return false;
    const { tries: _, ...fresh } = entry;
    this.rewrite(name, from, fresh);
    return this.move(name, from, "waiting");
  }

  /** Deletes an entry for good. */
  drop(name: string, place: SpoolPlace): boolean {
    const file = path.join(this.dir, SUBDIR[place], name);
    if (!ENTRY.test(name) || !fs.existsSync(file)) return false;
    fs.rmSync(file, { force: true });
    return true;
  }

  private rewrite(name: string, place: SpoolPlace, entry: SpoolEntry): void {
    const file = path.join(this.dir, SUBDIR[place], name);
    const tmp = path.join(this.dir, SUBDIR[place], `.${name}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    fs.renameSync(tmp, file);
  }

  private move(name: string, from: SpoolPlace, to: SpoolPlace): boolean {
    if (!ENTRY.test(name)) return false;
    fs.mkdirSync(path.join(this.dir, SUBDIR[to]), { recursive: true, mode: 0o700 });
    try {
      fs.renameSync(path.join(this.dir, SUBDIR[from], name), path.join(this.dir, SUBDIR[to], name));
      return true;
    } catch {
      return false;
    }
  }

  /** Takes the drain lock; undefined when another live call holds it. */
  lock(): (() => void) | undefined {
    const file = path.join(this.dir, ".drain.lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 });
        return () => fs.rmSync(file, { force: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
        if (!staleLock(file)) return undefined;
        fs.rmSync(file, { force: true });
      }
    }
    return undefined;
  }

  private countOverflow(): void {
    const file = path.join(this.dir, "overflow");
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${this.overflowCount() + 1}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** A lock whose holder is gone, or that is older than any drain takes. */
function staleLock(file: string): boolean {
  try {
    const pid = Number(fs.readFileSync(file, "utf8"));
    if (Date.now() - fs.statSync(file).mtimeMs > STALE_LOCK_MS) return true;
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "EPERM";
  }
}
