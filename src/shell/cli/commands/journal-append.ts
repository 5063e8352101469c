/**
 * `harness journal append`: JSON Lines on stdin to `JournalService.Append`, with a producer credential.
 * A bad line is reported with its line number and the rest go on; `docs/events.md` documents the format.
 * Batches are cut to stay under the server's request limit, which refuses an oversized request whole.
 * Each batch carries a random idempotency key, so the one retry after a lost answer admits nothing twice.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { create, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { jsonLines } from "../../journal/json-lines.js";
import {
  answerLost,
  handshakeFailed,
  type JournalClient,
  journalClient,
  unreachable,
} from "../../rpc/client.js";
import { readTokenFile } from "../../rpc/credentials.js";
import { WireEventSchema } from "../../rpc/gen/harness/v1/journal_pb.js";
import { DEFAULT_READ_MAX_BYTES, MAX_APPEND_BATCH } from "../../rpc/limits.js";
import { EXIT, type Io } from "../io.js";
import { clientTarget, noAnswer, type RemoteOptions } from "../target.js";

/** What a request may hold in events: the limit, less room for the request's other fields. */
const REQUEST_BUDGET = DEFAULT_READ_MAX_BYTES - 1024;
const TOO_LARGE = `the event is larger than the ${DEFAULT_READ_MAX_BYTES / (1024 * 1024)} MiB request limit`;

/** The bytes one event adds to a request: its field tag and length, then the encoded WireEvent. */
function encodedSize(kind: string, event: JsonObject): number {
  const n = toBinary(WireEventSchema, create(WireEventSchema, { kind, event })).length;
  let prefix = 2;
  for (let v = n; v >= 0x80; v >>>= 7) prefix++;
  return prefix + n;
}

/** How long the retry waits for the daemon to listen again (a supervisor restarting it), and how often it tries. */
const RECONNECT_MS = 30_000;
const RECONNECT_PAUSE_MS = 200;

/**
 * One Append; when its answer is lost, retried once, with the same key, as soon as the daemon listens
 * again: the key makes the retry answer what the first request admitted, if it did.
 */
async function appendRetrying(
  client: JournalClient,
  req: Parameters<JournalClient["append"]>[0],
): ReturnType<JournalClient["append"]> {
  try {
    return await client.append(req);
  } catch (e) {
    if (!answerLost(e)) throw e;
  }
  const deadline = Date.now() + RECONNECT_MS;
  for (;;) {
    await sleep(RECONNECT_PAUSE_MS);
    try {
      return await client.append(req);
    } catch (e) {
      // Refused connections sent nothing: only a delivered retry counts as the one retry.
      if (answerLost(e) || !unreachable(e) || Date.now() > deadline) throw e;
    }
  }
}

export async function runJournalAppend(
  options: {
    readonly socket?: string;
    readonly config?: string;
    readonly tokenFile?: string;
    readonly json?: boolean;
  } & RemoteOptions,
  input: NodeJS.ReadableStream,
  io: Io,
): Promise<number> {
  const tokenFile = options.tokenFile ?? io.env.HARNESS_PRODUCER_TOKEN_FILE;
  if (tokenFile === undefined) {
    io.err(
      "harness journal append: a producer credential is needed: --token-file PATH (or HARNESS_PRODUCER_TOKEN_FILE)",
    );
    return EXIT.usage;
  }
  let token: string;
  try {
    token = await readTokenFile(tokenFile);
  } catch (e) {
    io.err(`harness journal append: ${(e as Error).message}`);
    return EXIT.usage;
  }
  let client: ReturnType<typeof journalClient>;
  let where: string;
  let noDaemon: (e: unknown) => boolean;
  try {
    const target = await clientTarget({ ...options, env: io.env });
    client = journalClient(target.rpc, token);
    where = target.where;
    // Over TLS, a handshake refused is told as no answer, with what may have refused it.
    noDaemon = (e) => unreachable(e) || (target.remote && handshakeFailed(e));
  } catch (e) {
    io.err(`harness journal append: ${(e as Error).message}`);
    return EXIT.usage;
  }
  let admitted = 0;
  let failed = 0;
  /** The first line of the batch whose answer has not come: where a failed run leaves off. */
  let unanswered: number | undefined;
  let batch: { n: number; kind: string; event: JsonObject }[] = [];
  let batchBytes = 0;
  const report = (n: number, outcome: string, detail?: string) => {
    if (options.json === true)
      io.out(JSON.stringify({ line: n, outcome, ...(detail === undefined ? {} : { detail }) }));
    else if (outcome !== "admitted")
      io.err(`line ${n}: ${outcome}${detail === undefined ? "" : `: ${detail}`}`);
  };
  const send = async (): Promise<void> => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    batchBytes = 0;
    unanswered = sent[0]?.n;
    const res = await appendRetrying(client, {
      events: sent.map(({ kind, event }) => ({ kind, event })),
      idempotencyKey: randomUUID(),
    });
    res.results.forEach((r, i) => {
      const n = (sent[i] as (typeof sent)[number]).n;
      if (r.result.case === "admitted") {
        admitted++;
        report(n, "admitted", `seq ${r.result.value.seq}`);
      } else {
        failed++;
        report(
          n,
          r.result.case ?? "unknown",
          r.result.case === "rejected" ? r.result.value.reason : undefined,
        );
      }
    });
    unanswered = undefined;
  };
  try {
    for await (const line of jsonLines(input)) {
      if ("error" in line) {
        failed++;
        report(line.n, "rejected", line.error);
        continue;
      }
      const v = line.value;
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        failed++;
        report(line.n, "rejected", "an event must be a JSON object");
        continue;
      }
      const { kind, ...event } = v as Record<string, unknown>;
      if (typeof kind !== "string") {
        failed++;
        report(line.n, "rejected", "kind is required (run_event, attempt_event, graph_event or fact_event)");
        continue;
      }
      const size = encodedSize(kind, event as JsonObject);
      if (size > REQUEST_BUDGET) {
        failed++;
        report(line.n, "rejected", TOO_LARGE);
        continue;
      }
      if (batchBytes + size > REQUEST_BUDGET) await send();
      batch.push({ n: line.n, kind, event: event as JsonObject });
      batchBytes += size;
      if (batch.length >= MAX_APPEND_BATCH) await send();
    }
    await send();
  } catch (e) {
    // What was admitted before the daemon went away stays admitted: say how much, and where to resume.
    const from =
      unanswered === undefined ? "" : `; from line ${unanswered} on, nothing is known to be admitted`;
    io.err(
      `harness journal append: ${noDaemon(e) ? noAnswer(where) : (e as Error).message}; ${admitted} admitted, ${failed} not before that${from}`,
    );
    return noDaemon(e) ? EXIT.unreachable : EXIT.failed;
  }
  if (options.json !== true) io.err(`harness journal append: ${admitted} admitted, ${failed} not`);
  return failed === 0 ? EXIT.ok : EXIT.failed;
}
