/**
 * The daemon's ingest of agent hook calls: the hook's raw payload in, at most one journal row
 * admitted through the same admission path as `JournalService.Append` (the source's permissions, the
 * kind's fields and bounds, the bounded queue), and the agent's answer out, from the run's verdict. The
 * mapping runs here once, by the call's hook format (`hook-format.ts`), so the http hook and the
 * command forwarder give the same rows byte for byte.
 *
 * Only what a row may hold is kept: identifiers, the action, flags, the input's digest and its
 * repo-relative paths. The payload's prompt, tool output and messages are read by nobody.
 *
 * Credentials: tool and mark rows need the observer token, opened and closed rows the ledger token;
 * every call needs the observer token, which is how a hook proves it is one. A token bound to a harness
 * is good only for that harness's calls.
 */
import type { RefusalReason } from "../../../core/admission.js";
import type { RunVerdict } from "../../../core/run-verdict.js";
import { type ProducerSource, sourceRefusal } from "../../../core/sources.js";
import type { AdmitOptions, AdmitResult } from "../../journal/admit.js";
import type { PeerIdentity } from "../../support/tls-listener.js";
import type { Placement, RunLife } from "../enforcement/run-life.js";
import type { RunVerdicts } from "../enforcement/run-verdict.js";
import type { RunTelling } from "../enforcement/tell.js";
import {
  ATTEMPT_BUDGET_MS,
  type AwaitEvaluated,
  attemptJudged,
  type FailModeAnswer,
  unjudgedAnswer,
} from "./attempt.js";
import { FAIL_QUERY, type FailMode, failPolicy, HOOK_FAIL_MODES, isHookFailMode } from "./fail-mode.js";
import type { GitFacts } from "./git-facts.js";
import { HARNESS_NAME_RULE, isHarnessName } from "./harness-name.js";
import { ALLOW, type HookAnswer, hookAnswer } from "./hook-answer.js";
import { answerTelling } from "./hook-context.js";
import type { HookEvent, Payload, RowPlan } from "./hook-event.js";
import type { HookFormat } from "./hook-format.js";
import { callKey, payloadKey } from "./hook-key.js";
import { MAX_FACTS_BYTES, MAX_HOOK_PAYLOAD_BYTES } from "./hook-limits.js";
import { repoPaths } from "./repo-paths.js";
import { openEnvelope, type SuppliedFacts } from "./supplied-facts.js";

/** Who a presented token is: a producer source, bound to one harness or to any. */
export interface TokenIdentity {
  readonly source: ProducerSource;
  readonly harness?: string;
}

export interface IngestDeps {
  /** The same admission `JournalService.Append` uses; the ingest's rows are marked hook-fed there. */
  readonly admit: (
    source: ProducerSource,
    events: readonly unknown[],
    key: string | undefined,
    options: AdmitOptions,
  ) => Promise<readonly AdmitResult[]>;
  readonly identify: (token: string) => TokenIdentity | undefined;
  readonly verdicts: RunVerdicts;
  /** What a live call's answer tells the run of the rules (`hook-context.ts`); absent: nothing. */
  readonly tell?: RunTelling;
  /** Which run a call's row belongs to, and whether it may still be recorded (one close per run). */
  readonly runs: Pick<RunLife, "place">;
  readonly gitFacts: (cwd: string) => Promise<GitFacts>;
  /** `[agents] verify_patterns`, read on every call so a reload applies. */
  readonly verifyPatterns: () => readonly string[];
  /** Told of a verdict that could not be read (the call is then allowed). */
  readonly onError?: (what: string, e: unknown) => void;
  /** Counts a refused row as Append's refusals are (`harness_rule_journal_rejected_total`, the log). */
  readonly rejected?: (source: ProducerSource, reason: RefusalReason) => void;
  /** Waits for the evaluator to have judged a row: a live attempt's answer waits for it (`attempt.ts`). */
  readonly evaluated: AwaitEvaluated;
  /** `[agents] on_unreachable`: how an attempt the rules could not judge is answered, unless the harness's hook says. */
  readonly failMode: () => FailMode;
  /** Told each live attempt its fail mode answered (the decision export); it must not throw. */
  readonly onFailMode?: (answer: FailModeAnswer) => void;
}

export interface IngestRequest {
  /** The format the call came in: its endpoint's. */
  readonly format: HookFormat;
  readonly harness: string;
  readonly observerToken?: string;
  readonly ledgerToken?: string;
  readonly body: Uint8Array;
  /**
   * A spooled call: when the hook received it (the event's own `at`), and no verdict is asked. Its
   * absence is what marks a live call.
   */
  readonly at?: number;
  /** The call's idempotency key: delivered twice, admitted once. Derived from the payload when absent. */
  readonly key?: string;
  /** The command hook's call nonce (`hook-key.ts`), when it sent one rather than a key. */
  readonly call?: string;
  /** The harness's own fail mode, as its hook was installed (`fail-mode.ts`); absent: the global one. */
  readonly fail?: string;
  /** The body is `supplied-facts.ts`'s envelope: the forwarder computed the git facts (decision 0017). */
  readonly envelope?: boolean;
  /**
   * The call came from another machine, or may have (the TCP listener under TLS): the daemon runs no
   * git on its `cwd`, and its row has the facts it brought, or none.
   */
  readonly remote?: boolean;
  /** The client certificate of a call over mutual TLS: recorded beside its row, like an Append's. */
  readonly peer?: PeerIdentity;
}

/** `unstored`: admitted to the queue, but its commit failed (answered 503). */
export type HookRowOutcome = "admitted" | "none" | "rejected" | "dropped" | "unstored";

/** What became of a call's row: its outcome, why when it is not stored, and its seq when it is. */
interface RowAdmission {
  readonly row: HookRowOutcome;
  readonly note?: string;
  readonly seq?: number;
}

export interface IngestResponse {
  /**
   * 200 answered; 400 a payload that cannot be used; 401 a missing or wrong token; 413 too large; 503
   * the row could not be stored (the hook should keep the call: nothing was acknowledged).
   */
  readonly status: 200 | 400 | 401 | 413 | 503;
  readonly answer: HookAnswer;
  readonly row: HookRowOutcome;
  /** Why nothing was recorded, for the hook's stderr: never payload text. */
  readonly note?: string;
}

const HOOK_FED: AdmitOptions = { hookFed: true };
/** A live call waits for its row's commit, but not for the disk (`../store/wal-sync.ts`). */
const HOOK_FED_LIVE: AdmitOptions = { hookFed: true, unsynced: true };
const MAX_KEY = 128;

/** A call made now, its agent waiting for the answer; a spooled one carries the time it was made. */
const isLive = (req: IngestRequest): boolean => req.at === undefined;

const refuse = (status: IngestResponse["status"], note: string): IngestResponse => ({
  status,
  answer: ALLOW,
  row: "none",
  note,
});

function parsePayload(body: Uint8Array): Payload | string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return "the payload is not UTF-8 text";
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "the payload is not JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return "the payload is not a JSON object";
  return value as Payload;
}

/**
 * A row that was queued but not committed (the store could not write it): nothing is acknowledged, and
 * the answer is a 503, so the command hook spools the call (as for a daemon that failed) and Claude
 * Code's http hook reports a failed hook (`hook-forwarder.ts`, docs/agents-mapping.md).
 */
const notStored = (reason: string): { row: HookRowOutcome; note: string } => ({
  row: "unstored",
  note: `the journal could not store the row (${reason}); not recorded`,
});

export class HookIngest {
  constructor(private readonly deps: IngestDeps) {}

  async handle(req: IngestRequest): Promise<IngestResponse> {
    if (!isHarnessName(req.harness)) return refuse(400, `the harness name must be ${HARNESS_NAME_RULE}`);
    if (req.key !== undefined && (req.key === "" || req.key.length > MAX_KEY))
      return refuse(400, `the idempotency key must be 1 to ${MAX_KEY} characters`);
    if (req.fail !== undefined && !isHookFailMode(req.fail))
      return refuse(400, `the ${FAIL_QUERY} parameter must be ${HOOK_FAIL_MODES.join(" or ")}`);
    if (req.body.byteLength > MAX_HOOK_PAYLOAD_BYTES + (req.envelope === true ? MAX_FACTS_BYTES : 0))
      return refuse(413, `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`);
    const caller = this.authorized(req.observerToken, "observer", req.harness);
    if (caller !== undefined) return refuse(401, caller);
    const body = parsePayload(req.body);
    if (typeof body === "string") return refuse(400, `${body}; not recorded`);
    const opened = req.envelope === true ? openEnvelope(body) : undefined;
    if (typeof opened === "string") return refuse(400, `${opened}; not recorded`);
    // The envelope's room is for the facts: the payload inside it keeps the payload's own bound.
    if (opened !== undefined && Buffer.byteLength(JSON.stringify(opened.payload)) > MAX_HOOK_PAYLOAD_BYTES)
      return refuse(413, `the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded`);
    const parsed = opened?.payload ?? body;
    const { format } = req;
    const mapped = format.map(parsed, this.deps.verifyPatterns());
    if (!mapped.ok) return refuse(400, `${mapped.problem}; not recorded`);
    const hook = mapped.hook;
    if (hook.row?.source === "ledger") {
      const ledger = this.authorized(req.ledgerToken, "ledger", req.harness);
      if (ledger !== undefined) return refuse(401, ledger);
    }
    const placed = await this.place(req.harness, hook.session, hook.row?.type);
    if (placed === undefined) return refuse(503, "the store could not tell the session's run; not recorded");
    const { run } = placed;
    // The http hook sends no key: the payload's own ids give one where they name the call. The command
    // hook's fast path sends its nonce, for the key the forwarder would have sent.
    const key =
      req.key ??
      (req.call === undefined
        ? payloadKey(format, req.harness, parsed)
        : callKey(format, req.harness, parsed, req.call));
    const keyed = key === undefined ? req : { ...req, key };
    // A live attempt is judged before the answer; one of a run already stopped has nothing left to judge.
    const attempt = isLive(req) && hook.row?.type === "attempt";
    const stopped = attempt && (await this.alreadyStopped(req.harness, run));
    const admitted =
      hook.row === undefined || stopped
        ? { row: "none" as const }
        : placed.refused !== undefined
          ? this.afterClose(hook.row, placed.refused)
          : await this.admitRow(keyed, hook, hook.row, run, opened).finally(placed.done);
    // A run closed before the call has nothing left to judge: its verdict answers it.
    const judged =
      !attempt ||
      stopped ||
      placed.refused !== undefined ||
      (await attemptJudged(admitted, this.deps.evaluated));
    const gate = format.gate(hook.event);
    const why = admitted.note ?? `not evaluated within ${ATTEMPT_BUDGET_MS} ms`;
    const unjudged = judged
      ? undefined
      : unjudgedAnswer(
          format,
          gate,
          failPolicy(isHookFailMode(req.fail) ? req.fail : undefined, this.deps.failMode()),
          why,
        );
    // A spooled call is history: its answer has no reader, and asking would deliver a pending stop to nobody.
    const verdict = isLive(req) ? await this.verdict(req.harness, run) : { kind: "allow" as const };
    const note =
      admitted.note ??
      (judged ? undefined : `the attempt was not evaluated within ${ATTEMPT_BUDGET_MS} ms`) ??
      (hook.unknown === true
        ? `unknown ${format.name} event ${JSON.stringify(hook.event)}; not recorded`
        : undefined);
    // An unjudged attempt the verdict lets go on is answered by the fail mode, and told nothing; an
    // unstored row's answer is a 503 the hook does not read: it is told nothing either.
    const plain = hookAnswer(format, req.harness, gate, verdict);
    // The fail mode decided only where the run's verdict let the call go on.
    if (!judged && gate === "tool" && plain === ALLOW && hook.row?.type === "attempt")
      this.deps.onFailMode?.({
        harness: req.harness,
        run,
        tool: hook.row.tool,
        seq: admitted.seq,
        result: unjudged === undefined ? "allow" : "deny",
        source: isHookFailMode(req.fail) ? "harness" : "global",
        reason: why,
      });
    const answer =
      plain === ALLOW && unjudged !== undefined
        ? unjudged
        : isLive(req) && admitted.row !== "unstored"
          ? await answerTelling(
              { format, harness: req.harness, run, event: hook.event, verdict },
              this.deps.tell,
              this.deps.onError,
            )
          : plain;
    return {
      // An attempt is never kept for later: its fail mode answers it now, on either path.
      status: admitted.row === "unstored" && !attempt ? 503 : 200,
      answer,
      row: admitted.row,
      ...(note === undefined ? {} : { note }),
    };
  }

  /** Why `token` may not act as `source` for `harness`, or undefined when it may. */
  private authorized(token: string | undefined, source: ProducerSource, harness: string): string | undefined {
    const header = source === "observer" ? "the Authorization bearer token" : "the ledger token";
    if (token === undefined || token === "")
      return `${header} (the ${source} producer credential) is missing`;
    const id = this.deps.identify(token);
    if (id === undefined || id.source !== source)
      return `${header} is not one the daemon knows for the ${source} producer`;
    if (id.harness !== undefined && id.harness !== harness)
      return `${header} is bound to another harness than ${harness}`;
    return undefined;
  }

  private async admitRow(
    req: IngestRequest,
    hook: HookEvent,
    plan: RowPlan,
    run: string,
    envelope: { readonly facts: SuppliedFacts; readonly clock?: number } | undefined,
  ): Promise<RowAdmission> {
    const facts = await this.factsOf(req, hook, plan, envelope?.facts);
    const kind = plan.type === "attempt" ? "attempt_event" : "run_event";
    const type = plan.type === "attempt" ? "tool" : plan.type;
    // The event's `at` is the producer's clock (a spooled call's, or the forwarder's): data beside the
    // row's own `at`, the daemon's admission, which alone is `now` (REQ-7).
    const at = req.at ?? envelope?.clock;
    const wire: Record<string, unknown> = {
      kind,
      type,
      ...(at === undefined ? {} : { at: new Date(at).toISOString() }),
      harness: req.harness,
      run,
      adapter: req.format.agent,
      ...(facts.repo === undefined ? {} : { repo: facts.repo }),
      ...(facts.branch === undefined ? {} : { branch: facts.branch }),
      session: hook.session,
      ...(hook.subagent?.id === undefined ? {} : { subagent_id: hook.subagent.id }),
      ...(hook.subagent?.type === undefined ? {} : { subagent_type: hook.subagent.type }),
    };
    switch (plan.type) {
      case "opened":
        if (plan.trigger !== undefined) wire.trigger = plan.trigger;
        break;
      case "closed":
        wire.outcome = plan.outcome;
        wire.reason = plan.reason;
        break;
      case "mark":
        wire.mark = plan.mark;
        break;
      case "attempt":
      case "tool": {
        wire.tool = plan.tool;
        wire.action = plan.action;
        if (plan.type === "tool") wire.is_error = plan.isError;
        if (plan.digest !== undefined) wire.digest = plan.digest;
        if (facts.paths.length > 0) wire.paths = facts.paths;
        break;
      }
    }
    const refusal = sourceRefusal(plan.source, kind, type);
    if (refusal !== undefined) {
      this.deps.rejected?.(plan.source, "source_not_allowed");
      return { row: "rejected", note: refusal };
    }
    // Marked hook-fed by the daemon, not by the wire: a producer's Append cannot claim it. Every call
    // is answered after its row's commit, so `admitted` means stored; a live call's commit does not
    // wait for the disk (no fsync on the agent's critical path), a spooled call's does.
    const [result] = await this.deps.admit(plan.source, [wire], req.key, {
      ...(isLive(req) ? HOOK_FED_LIVE : HOOK_FED),
      ...(req.peer === undefined ? {} : { peer: req.peer }),
    });
    if (result?.kind === "rejected") this.deps.rejected?.(plan.source, result.code);
    switch (result?.kind) {
      case "admitted":
        return { row: "admitted", seq: result.seq };
      case "rejected":
        if (result.code === "store_error") {
          this.deps.onError?.("committing a hook row", new Error(result.reason));
          return notStored(result.reason);
        }
        return { row: "rejected", note: `the row was refused: ${result.reason}` };
      default:
        return { row: "dropped", note: "the journal's queue is full; the row was dropped" };
    }
  }

  /**
   * The row's repo, branch and repo-relative paths: those the forwarder computed on the agent's machine
   * when it sent them; none for any other call that came over TLS (the daemon never runs git on a path
   * a remote caller names); else read here from the call's `cwd`.
   */
  private async factsOf(
    req: IngestRequest,
    hook: HookEvent,
    plan: RowPlan,
    supplied: SuppliedFacts | undefined,
  ): Promise<{ repo?: string; branch?: string; paths: readonly string[] }> {
    // Only a tool call's row holds paths.
    const named = plan.type === "tool" || plan.type === "attempt" ? plan.paths : undefined;
    if (supplied !== undefined)
      return {
        ...(supplied.repo === undefined ? {} : { repo: supplied.repo }),
        ...(supplied.branch === undefined ? {} : { branch: supplied.branch }),
        paths: named === undefined ? [] : (supplied.paths ?? []),
      };
    if (req.remote === true || hook.cwd === undefined) return { paths: [] };
    const facts = await this.deps.gitFacts(hook.cwd);
    return {
      ...(facts.repo === undefined ? {} : { repo: facts.repo }),
      ...(facts.branch === undefined ? {} : { branch: facts.branch }),
      paths:
        named === undefined || facts.realTop === undefined ? [] : repoPaths(named, hook.cwd, facts.realTop),
    };
  }

  /** The call's run, or undefined when the store could not be read (the hook keeps the call). */
  private async place(
    harness: string,
    session: string,
    type: RowPlan["type"] | undefined,
  ): Promise<Placement | undefined> {
    try {
      return await this.deps.runs.place(harness, session, type);
    } catch (e) {
      this.deps.onError?.("placing a hook call in its run", e);
      return undefined;
    }
  }

  /** A row its run's close leaves out: answered, not recorded, and counted unless it is a second close. */
  private afterClose(plan: RowPlan, refused: NonNullable<Placement["refused"]>): RowAdmission {
    if (!refused.counted) return { row: "none", note: refused.note };
    this.deps.rejected?.(plan.source, "run_closed");
    return { row: "rejected", note: refused.note };
  }

  /** Whether a stop already reached the run (its later calls are all answered stopped). */
  private async alreadyStopped(harness: string, run: string): Promise<boolean> {
    try {
      return (await this.deps.verdicts.peek(harness, run)).kind === "stopped";
    } catch {
      return false;
    }
  }

  private async verdict(harness: string, run: string): Promise<RunVerdict> {
    try {
      return await this.deps.verdicts.check(harness, run);
    } catch (e) {
      this.deps.onError?.("reading the run's verdict", e);
      return { kind: "allow" };
    }
  }
}
