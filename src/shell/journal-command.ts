/**
 * `harness journal append` (JSON Lines on stdin to `JournalService.Append`, with a producer credential)
 * and `harness journal import FILE` (the same lines into a store no daemon holds, with the same
 * admission checks and an optional non-decreasing `admitted_at`). A bad line is reported with its line
 * number and the rest go on; `docs/events.md` documents the format.
 */
import * as fs from "node:fs";
import * as readline from "node:readline";
import type { JsonObject } from "@bufbuild/protobuf";
import { defaultSource, isProducerSource, type Source } from "../core/sources.js";
import { clientTarget, EXIT, unreachable } from "./client-target.js";
import { storePath as defaultStorePath } from "./config/paths.js";
import { parseRfc3339, parseWireEvent } from "./journal/event-format.js";
import { journalClient } from "./rpc/client.js";
import { readTokenFile } from "./rpc/credentials.js";
import { MAX_APPEND_BATCH } from "./rpc/journal-service.js";
import { JournalTable } from "./store/journal-table.js";
import { openStore } from "./store/open-store.js";

interface Io {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

type Line = { readonly n: number; readonly value: unknown } | { readonly n: number; readonly error: string };

async function* jsonLines(input: NodeJS.ReadableStream): AsyncGenerator<Line> {
  let n = 0;
  for await (const text of readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    n++;
    if (text.trim() === "") continue;
    try {
      yield { n, value: JSON.parse(text) as unknown };
    } catch (e) {
      yield { n, error: `not JSON: ${(e as Error).message}` };
    }
  }
}

export async function runJournalAppend(
  options: {
    readonly socket?: string;
    readonly config?: string;
    readonly tokenFile?: string;
    readonly json?: boolean;
  },
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
  const target = await clientTarget({ socket: options.socket, config: options.config, env: io.env });
  const client = journalClient({ socketPath: target.socketPath }, token);
  let admitted = 0;
  let failed = 0;
  let batch: { n: number; kind: string; event: JsonObject }[] = [];
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
    const res = await client.append({ events: sent.map(({ kind, event }) => ({ kind, event })) });
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
        report(line.n, "rejected", "kind is required (run_event, graph_event or fact_event)");
        continue;
      }
      batch.push({ n: line.n, kind, event: event as JsonObject });
      if (batch.length >= MAX_APPEND_BATCH) await send();
    }
    await send();
  } catch (e) {
    io.err(
      `harness journal append: ${unreachable(e) ? `no daemon answers on ${target.socketPath}` : (e as Error).message}`,
    );
    return unreachable(e) ? EXIT.unreachable : EXIT.failed;
  }
  if (options.json !== true) io.err(`harness journal append: ${admitted} admitted, ${failed} not`);
  return failed === 0 ? EXIT.ok : EXIT.failed;
}

export async function runJournalImport(
  file: string,
  options: { readonly store?: string; readonly json?: boolean },
  io: Io,
): Promise<number> {
  let input: fs.ReadStream;
  try {
    await fs.promises.access(file, fs.constants.R_OK);
    input = fs.createReadStream(file);
  } catch (e) {
    io.err(`harness journal import: ${(e as Error).message}`);
    return EXIT.usage;
  }
  let store: ReturnType<typeof openStore>;
  try {
    store = openStore(
      options.store ?? defaultStorePath(io.env),
      `harness journal import (pid ${process.pid})`,
    );
  } catch (e) {
    io.err(`harness journal import: ${(e as Error).message}`);
    return EXIT.failed;
  }
  const journal = new JournalTable(store.db);
  let lastAt = journal.last().at;
  let imported = 0;
  let failed = 0;
  const refuse = (n: number, why: string) => {
    failed++;
    io.err(`${file}:${n}: ${why}`);
  };
  try {
    const insert = store.db.transaction((rows: { kind: Parameters<JournalTable["append"]>[0] }[]) => {
      for (const r of rows) journal.append(r.kind);
    });
    let pending: { kind: Parameters<JournalTable["append"]>[0] }[] = [];
    for await (const line of jsonLines(input)) {
      if ("error" in line) {
        refuse(line.n, line.error);
        continue;
      }
      const parsed = parseWireEvent(line.value);
      if (!parsed.ok) {
        refuse(line.n, parsed.problems.map((p) => p.message).join("; "));
        continue;
      }
      const obj = line.value as Record<string, unknown>;
      let at = lastAt;
      if (obj.admitted_at !== undefined) {
        const t = typeof obj.admitted_at === "string" ? parseRfc3339(obj.admitted_at) : undefined;
        if (t === undefined) {
          refuse(line.n, "admitted_at must be an RFC 3339 time");
          continue;
        }
        if (t < lastAt) {
          refuse(
            line.n,
            `admitted_at ${obj.admitted_at} is earlier than the row before it; it must not decrease`,
          );
          continue;
        }
        at = t;
      } else at = Math.max(lastAt, Date.now());
      let source: Source = defaultSource(parsed.kind, parsed.event.type);
      if (obj.source !== undefined) {
        if (typeof obj.source !== "string" || !(isProducerSource(obj.source) || obj.source === "tick")) {
          refuse(line.n, `source must be one of observer, ledger, loopguard, graph, facts, tick`);
          continue;
        }
        source = obj.source as Source;
      }
      lastAt = at;
      pending.push({ kind: { kind: parsed.kind, source, at, event: parsed.event } });
      imported++;
      if (pending.length >= 1_000) {
        insert.immediate(pending);
        pending = [];
      }
    }
    insert.immediate(pending);
  } catch (e) {
    io.err(`harness journal import: ${(e as Error).message}`);
    store.close();
    return EXIT.failed;
  }
  store.close();
  if (options.json === true) io.out(JSON.stringify({ imported, refused: failed }));
  else io.err(`harness journal import: ${imported} rows imported, ${failed} refused`);
  return failed === 0 ? EXIT.ok : EXIT.failed;
}
