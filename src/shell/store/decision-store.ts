/**
 * The evaluator's decisions in the store: the core's state (cooldowns, shadow records, holds, runs in
 * flight, hashes over their cost limit), the fire log with each fire's planned actions and its
 * annotation, suppressed counts and the cursor. `commit` writes what a stretch of rows decided in one
 * `BEGIN IMMEDIATE` transaction, so the fires one row produced, their holds and cooldowns, and the
 * cursor are durable together before anything acts on them (REQ-7).
 */
import type { EventFields } from "../../core/journal.js";
import type { Fire, FireAction, PrimitiveCall } from "../../core/outcome.js";
import type { CoreState, Hold, StateOp } from "../../core/state.js";
import { cooldownKey, holdKey } from "../../core/state.js";
import { selectorFields } from "../../core/window.js";
import type { Db } from "./open-store.js";

/**
 * The actions of a fire whose progress the store records (rule_actions), as they start after the
 * commit; a fire's annotation is written in the commit itself, and its hold is a state op.
 */
export type PlannedAction = Extract<FireAction["kind"], "notify" | "stop">;

/**
 * The closed set of an action's states. `undelivered`: it never reached its target (a crash before it
 * started, or nothing configured). `unknown`: a crash after it started, so it may have run.
 */
export type ActionState =
  | "pending"
  | "started"
  | "ok"
  | "error"
  | "timeout"
  | "dropped"
  | "suppressed"
  | "undelivered"
  | "unknown";

export interface Decisions {
  /** The seq of the last row these decisions cover. */
  readonly cursor: number;
  /** Each row's state ops, with that row's `at` (a release records when it happened). */
  readonly ops: readonly { readonly at: number; readonly op: StateOp }[];
  /** Each fire with the actions the core planned for it. */
  readonly fires: readonly Fire[];
  /** Matches inside a cooldown, per (hash, rule). */
  readonly suppressed: ReadonlyMap<
    string,
    { readonly hash: string; readonly rule: string; readonly n: number }
  >;
}

const splitKey = (key: string): [string, string] => {
  const i = key.indexOf("\u0000");
  return [key.slice(0, i), key.slice(i + 1)];
};

/** Every hash's shadow record as committed: backtest reads them too, so its modes match the fire log. */
export function readShadows(db: Db): CoreState["shadows"] {
  const shadows: Record<string, CoreState["shadows"][string]> = {};
  for (const r of db.prepare("SELECT hash, since, completed FROM rule_shadows").all() as {
    hash: string;
    since: number;
    completed: number;
  }[])
    shadows[r.hash] = { since: r.since, completed: r.completed === 1 };
  return shadows;
}

export class DecisionStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      cursor: db.prepare("UPDATE evaluator SET cursor = ? WHERE id = 1"),
      shadowSince: db.prepare(
        "INSERT INTO rule_shadows (hash, since, completed) VALUES (?, ?, 0) ON CONFLICT (hash) DO UPDATE SET since = excluded.since, completed = 0",
      ),
      shadowCompleted: db.prepare(
        "INSERT INTO rule_shadows (hash, since, completed) VALUES (?, 0, 1) ON CONFLICT (hash) DO UPDATE SET completed = 1",
      ),
      cooldown: db.prepare(
        "INSERT INTO rule_cooldowns (hash, target, until, fire_id) VALUES (?, ?, ?, ?) ON CONFLICT (hash, target) DO UPDATE SET until = excluded.until, fire_id = excluded.fire_id",
      ),
      cooldownExpired: db.prepare("DELETE FROM rule_cooldowns WHERE hash = ? AND target = ?"),
      hold: db.prepare(
        "INSERT INTO rule_holds (harness, rule, hash, fire_id, since, cooldown, event) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      holdFalseSince: db.prepare(
        "UPDATE rule_holds SET false_since = ? WHERE harness = ? AND rule = ? AND released_at IS NULL",
      ),
      release: db.prepare(
        "UPDATE rule_holds SET released_at = ?, release_cause = ?, released_by = ? WHERE harness = ? AND rule = ? AND released_at IS NULL",
      ),
      runStart: db.prepare(
        "INSERT INTO runs_in_flight (harness, run) VALUES (?, ?) ON CONFLICT (harness) DO UPDATE SET run = excluded.run",
      ),
      runEnd: db.prepare("DELETE FROM runs_in_flight WHERE harness = ?"),
      sessionStart: db.prepare("INSERT OR REPLACE INTO sessions_in_flight (run, harness) VALUES (?, ?)"),
      sessionEnd: db.prepare("DELETE FROM sessions_in_flight WHERE run = ?"),
      costExceeded: db.prepare("INSERT OR IGNORE INTO rule_cost_exceeded (hash) VALUES (?)"),
      fire: db.prepare(
        `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run,
           declared_level, effective_level, mode, action, message, primitives)
         VALUES (@id, @seq, @at, @rule, @hash, @kind, @type, @targetKind, @targetKey, @harness, @run,
           @declaredLevel, @effectiveLevel, @mode, @action, @message, @primitives)`,
      ),
      action: db.prepare(
        "INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES (?, ?, 'pending', ?)",
      ),
      annotation: db.prepare(
        "INSERT INTO rule_annotations (fire_id, node, rule, message, at) VALUES (?, ?, ?, ?, ?)",
      ),
      suppressed: db.prepare(
        "INSERT INTO rule_suppressed (hash, rule, count) VALUES (?, ?, ?) ON CONFLICT (hash, rule) DO UPDATE SET count = count + excluded.count",
      ),
      actionState: db.prepare(
        "UPDATE rule_actions SET state = ?, detail = ?, updated_at = ? WHERE fire_id = ? AND action = ?",
      ),
      actionStart: db.prepare(
        "UPDATE rule_actions SET state = 'started', detail = NULL, updated_at = ? WHERE fire_id = ? AND action = ? AND state = 'pending'",
      ),
    };
  }

  cursor(): number {
    return (this.db.prepare("SELECT cursor FROM evaluator WHERE id = 1").get() as { cursor: number }).cursor;
  }

  /** The core state as committed. Cost-limit disables last until the next rule-set load, so a start clears them. */
  loadState(options: { readonly clearCostExceeded: boolean }): CoreState {
    if (options.clearCostExceeded) this.db.prepare("DELETE FROM rule_cost_exceeded").run();
    const cooldowns: Record<string, CoreState["cooldowns"][string]> = {};
    for (const r of this.db.prepare("SELECT hash, target, until, fire_id FROM rule_cooldowns").all() as {
      hash: string;
      target: string;
      until: number;
      fire_id: string;
    }[])
      cooldowns[cooldownKey(r.hash, r.target)] = { until: r.until, fireId: r.fire_id };
    const shadows = readShadows(this.db);
    const holds: Record<string, Hold> = {};
    for (const r of this.activeHoldRows()) holds[holdKey(r.harness, r.rule)] = toHold(r);
    const runs: Record<string, string> = {};
    for (const r of this.db.prepare("SELECT harness, run FROM runs_in_flight").all() as {
      harness: string;
      run: string;
    }[])
      runs[r.harness] = r.run;
    const sessions: Record<string, string> = {};
    for (const r of this.db.prepare("SELECT run, harness FROM sessions_in_flight").all() as {
      run: string;
      harness: string;
    }[])
      sessions[r.run] = r.harness;
    const costExceeded: Record<string, true> = {};
    for (const r of this.db.prepare("SELECT hash FROM rule_cost_exceeded").all() as { hash: string }[])
      costExceeded[r.hash] = true;
    return { cooldowns, shadows, holds, runs, sessions, costExceeded };
  }

  activeHolds(): Hold[] {
    return this.activeHoldRows().map(toHold);
  }

  private activeHoldRows(): HoldRow[] {
    return this.db
      .prepare(
        "SELECT harness, rule, hash, fire_id, since, cooldown, event, false_since FROM rule_holds WHERE released_at IS NULL ORDER BY id",
      )
      .all() as HoldRow[];
  }

  /** Writes one stretch of decisions and the cursor, atomically. */
  commit(d: Decisions): void {
    const s = this.stmts;
    this.db
      .transaction(() => {
        for (const { at, op } of d.ops) this.applyOp(at, op);
        for (const fire of d.fires) {
          s.fire.run({
            id: fire.id,
            seq: fire.seq,
            at: fire.at,
            rule: fire.rule,
            hash: fire.hash,
            kind: fire.kind,
            type: fire.type,
            targetKind: fire.target?.kind ?? null,
            targetKey: fire.target?.key ?? null,
            harness: fire.target?.harness ?? null,
            run: fire.target?.run ?? null,
            declaredLevel: fire.declaredLevel,
            effectiveLevel: fire.effectiveLevel,
            mode: fire.mode,
            action: fire.action,
            message: fire.message,
            primitives: JSON.stringify(fire.primitives.map(storedPrimitive)),
          });
          for (const a of fire.actions) {
            if (a.kind === "annotate") s.annotation.run(fire.id, a.node, fire.rule, fire.message, fire.at);
            else if (a.kind === "notify" || a.kind === "stop") s.action.run(fire.id, a.kind, fire.at);
          }
        }
        for (const { hash, rule, n } of d.suppressed.values()) s.suppressed.run(hash, rule, n);
        s.cursor.run(d.cursor);
      })
      .immediate();
  }

  private applyOp(at: number, op: StateOp): void {
    const s = this.stmts;
    switch (op.op) {
      case "shadow_since":
        s.shadowSince.run(op.hash, op.since);
        break;
      case "shadow_completed":
        s.shadowCompleted.run(op.hash);
        break;
      case "cooldown": {
        const [hash, target] = splitKey(op.key);
        s.cooldown.run(hash, target, op.entry.until, op.entry.fireId);
        break;
      }
      case "cooldown_expired": {
        const [hash, target] = splitKey(op.key);
        s.cooldownExpired.run(hash, target);
        break;
      }
      case "hold": {
        const h = op.hold;
        s.hold.run(h.harness, h.rule, h.hash, h.fireId, h.since, h.cooldown, JSON.stringify(h.event));
        break;
      }
      case "hold_false_since": {
        const [harness, rule] = splitKey(op.key);
        s.holdFalseSince.run(op.at ?? null, harness, rule);
        break;
      }
      case "release": {
        const [harness, rule] = splitKey(op.key);
        s.release.run(at, op.cause, op.by ?? null, harness, rule);
        break;
      }
      case "run_in_flight":
        if (op.run === undefined) s.runEnd.run(op.harness);
        else s.runStart.run(op.harness, op.run);
        break;
      case "session_in_flight":
        if (op.harness === undefined) s.sessionEnd.run(op.run);
        else s.sessionStart.run(op.run, op.harness);
        break;
      case "cost_exceeded":
        s.costExceeded.run(op.hash);
        break;
    }
  }

  /** Records an action's progress; each write is its own small transaction. */
  setActionState(
    fireId: string,
    action: PlannedAction,
    state: ActionState,
    detail: string | undefined,
    at: number,
  ): void {
    this.stmts.actionState.run(state, detail ?? null, at, fireId, action);
  }

  /**
   * An action about to start, recorded started if it is still pending: false when it is not (a daemon
   * that took over settled it), and then it must not start.
   */
  startAction(fireId: string, action: PlannedAction, at: number): boolean {
    return this.stmts.actionStart.run(at, fireId, action).changes === 1;
  }

  /**
   * At start: actions a previous daemon committed but had not finished are never repeated. A pending one
   * never started, so it is lost; a started one may have reached its target (a hook outlives the
   * daemon's SIGKILL), so its outcome is unknown.
   */
  settleInterrupted(at: number): { readonly undelivered: number; readonly unknown: number } {
    return this.db.transaction(() => ({
      undelivered: this.db
        .prepare(
          "UPDATE rule_actions SET state = 'undelivered', detail = 'the daemon stopped before the action started', updated_at = ? WHERE state = 'pending'",
        )
        .run(at).changes,
      unknown: this.db
        .prepare(
          // A stop waiting for a hook-fed run's next hook call is still on its way: it survives the restart.
          "UPDATE rule_actions SET state = 'unknown', detail = 'the daemon stopped after the action started: it may have run', updated_at = ? WHERE state = 'started' AND NOT EXISTS (SELECT 1 FROM agent_run_stops s WHERE s.fire_id = rule_actions.fire_id AND s.delivered_at IS NULL)",
        )
        .run(at).changes,
    }))();
  }
}

/** A `rule_holds` row as both backends read it. */
export interface HoldRow {
  harness: string;
  rule: string;
  hash: string;
  fire_id: string;
  since: number;
  cooldown: number;
  event: string;
  false_since: number | null;
}

export function toHold(r: HoldRow): Hold {
  const base = {
    rule: r.rule,
    hash: r.hash,
    harness: r.harness,
    fireId: r.fire_id,
    since: r.since,
    cooldown: r.cooldown,
    event: JSON.parse(r.event) as EventFields,
  };
  return r.false_since === null ? base : { ...base, falseSince: r.false_since };
}

/** The stored `primitives` column: one PrimitiveCall as JSON, its selector's fields as an object. */
export interface StoredPrimitive {
  readonly fn: string;
  readonly field?: string;
  readonly selector: { readonly kind: string; readonly fields: Readonly<Record<string, string | boolean>> };
  readonly withinMs: number;
  readonly result: number | boolean;
}

export function storedPrimitive(c: PrimitiveCall): StoredPrimitive {
  return {
    fn: c.fn,
    ...(c.field === undefined ? {} : { field: c.field }),
    selector: { kind: c.selector.kind, fields: Object.fromEntries(selectorFields(c.selector)) },
    withinMs: c.withinMs,
    result: c.result,
  };
}
