/**
 * `JournalService.Append`: producers' one way into the journal (a deliberate exception to
 * REQ-17 that `docs/security.md` explains). The caller is a producer credential bound to one source
 * (`tiers.ts`); this handler refuses rows that source may not produce, so such a row never reaches the
 * journal, and hands the rest to the injected `admit`, which checks each against the event format
 * (`parseWireEvent`) and queues it. A batch the store did not commit is refused whole, UNAVAILABLE, for
 * the producer to retry with the same idempotency key.
 */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { RefusalReason } from "../../core/admission.js";
import { EVENT_KINDS, isEventKind } from "../../core/kinds.js";
import { type ProducerSource, sourceRefusal } from "../../core/sources.js";
import { StoreUnavailableError } from "../errors.js";
import type { AdmitResult } from "../journal/admit.js";
import type { PeerIdentity } from "../support/tls-listener.js";
import type { AppendResultSchema, JournalService, WireEvent } from "./gen/harness/v1/journal_pb.js";
import { MAX_APPEND_BATCH } from "./limits.js";
import { toConnectError } from "./status.js";
import { CALLER, PEER } from "./tiers.js";

/**
 * The daemon's admission: each event is the wire object `{kind, ...fields}` (`event-format.ts`), and the
 * answer holds one result per event, in order. It must not block on the evaluator (a full queue drops).
 * With `key`, a request whose key was already committed gets that commit's answer and admits nothing.
 */
export type Admit = (
  source: ProducerSource,
  events: readonly unknown[],
  key?: string,
  options?: { readonly peer?: PeerIdentity },
) => Promise<readonly AdmitResult[]>;

/** The longest idempotency key: a random id needs far fewer characters. */
export const MAX_IDEMPOTENCY_KEY = 128;

/** Told of every event Append refuses, with its reason from the closed set, to count and log it. */
export type Rejected = (source: ProducerSource, reason: RefusalReason, events?: number) => void;

export { MAX_APPEND_BATCH } from "./limits.js";

type Refusal = Extract<AdmitResult, { kind: "rejected" }>;
type Checked = { readonly ok: true; readonly wire: JsonObject } | ({ readonly ok: false } & Refusal);

const refused = (code: RefusalReason, reason: string): Checked => ({
  ok: false,
  kind: "rejected",
  code,
  reason,
});

const PRODUCIBLE_KINDS = EVENT_KINDS.filter((k) => k !== "tick").join(", ");

/** Who appends: the credential's source, and the harness an issued producer token is bound to. */
interface Producer {
  readonly source: ProducerSource;
  readonly harness?: string;
}

/** The wire object of one event, or why its producer may not append it. */
function checkEvent({ source, harness }: Producer, event: WireEvent): Checked {
  const fields = event.event ?? {};
  // `kind` is the envelope's: an event field of that name could contradict the kind checked here.
  if (Object.hasOwn(fields, "kind"))
    return refused(
      "unknown_field",
      "event must not carry kind: the row's kind is WireEvent.kind, and a fact's own kind is fact_kind",
    );
  const { kind } = event;
  if (!isEventKind(kind))
    return refused("unknown_kind", `kind must be one of ${PRODUCIBLE_KINDS} (got ${JSON.stringify(kind)})`);
  const type = fields.type;
  // Checked before the source's permissions, which an absent type would otherwise seem to break.
  if (type === undefined || type === null || type === "") return refused("missing_field", "type is required");
  if (typeof type !== "string")
    return refused("bad_type", `type must be a string (got ${JSON.stringify(type)})`);
  const refusal = sourceRefusal(source, kind, type);
  if (refusal !== undefined) return refused("source_not_allowed", refusal);
  if (harness !== undefined && fields.harness !== harness)
    return refused(
      "source_not_allowed",
      `this credential appends only harness ${JSON.stringify(harness)}'s rows (got harness ${JSON.stringify(fields.harness ?? null)})`,
    );
  return { ok: true, wire: { kind, ...fields } };
}

type ResultInit = MessageInitShape<typeof AppendResultSchema>;

function toResult(r: AdmitResult): ResultInit {
  switch (r.kind) {
    case "admitted":
      return { result: { case: "admitted", value: { seq: BigInt(r.seq) } } };
    case "rejected":
      return { result: { case: "rejected", value: { reason: r.reason } } };
    case "dropped":
      return { result: { case: "dropped", value: {} } };
  }
}

/** The producer credential the interceptor authorized; failing closed without one. */
function producer(ctx: HandlerContext): Producer {
  const caller = ctx.values.get(CALLER);
  if (caller?.role !== "producer")
    throw new ConnectError("Append needs a producer credential", Code.PermissionDenied);
  return caller;
}

/** `admit`, with its failures given context and its answer checked to hold one result per event. */
async function admitChecked(
  admit: Admit,
  source: ProducerSource,
  wires: readonly JsonObject[],
  key: string | undefined,
  peer: PeerIdentity | undefined,
): Promise<readonly AdmitResult[]> {
  let admitted: readonly AdmitResult[];
  try {
    admitted = await admit(source, wires, key, peer === undefined ? undefined : { peer });
  } catch (e) {
    if (e instanceof ConnectError) throw e;
    throw new ConnectError(
      `admitting ${wires.length} events from ${source}: ${e instanceof Error ? e.message : String(e)}`,
      Code.Internal,
      undefined,
      undefined,
      e,
    );
  }
  if (admitted.length !== wires.length)
    throw new ConnectError(
      `admission answered ${admitted.length} results for ${wires.length} events from ${source}`,
      Code.Internal,
    );
  return admitted;
}

export function journalService(admit: Admit, rejected: Rejected): ServiceImpl<typeof JournalService> {
  return {
    async append(req, ctx) {
      const appender = producer(ctx);
      const { source } = appender;
      const n = req.events.length;
      if (n > MAX_APPEND_BATCH) {
        rejected(source, "too_large", n);
        throw new ConnectError(
          `a batch holds at most ${MAX_APPEND_BATCH} events (got ${n}); nothing was admitted`,
          Code.InvalidArgument,
        );
      }
      const key = req.idempotencyKey === "" ? undefined : req.idempotencyKey;
      if (key !== undefined && key.length > MAX_IDEMPOTENCY_KEY)
        throw new ConnectError(
          `idempotency_key holds at most ${MAX_IDEMPOTENCY_KEY} characters; nothing was admitted`,
          Code.InvalidArgument,
        );
      // The checks here depend only on the source and the events, so a retry repeats them exactly and the
      // key's stored answer covers the events they pass.
      const checks = req.events.map((event) => checkEvent(appender, event));
      const wires = checks.flatMap((c) => (c.ok ? [c.wire] : []));
      const admitted =
        wires.length === 0 ? [] : await admitChecked(admit, source, wires, key, ctx.values.get(PEER));
      // The batch's rows commit in one transaction: one store_error means none is acknowledged, and
      // the producer gets an error it retries (UNAVAILABLE) rather than results it would take as final.
      const failed = admitted.find((r) => r.kind === "rejected" && r.code === "store_error");
      if (failed !== undefined) {
        rejected(source, "store_error", wires.length);
        throw toConnectError(
          new StoreUnavailableError("journal", (failed as Refusal).reason),
          "JournalService.Append",
        );
      }
      let next = 0;
      const results = checks.map((c) => {
        // admitChecked answered exactly one result per wire, in order.
        const r = c.ok ? (admitted[next++] as AdmitResult) : c;
        if (r.kind === "rejected") rejected(source, r.code);
        return toResult(r);
      });
      return { results };
    },
  };
}
