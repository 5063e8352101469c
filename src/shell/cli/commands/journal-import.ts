/**
 * `harness journal import FILE`: the lines `journal append` takes, written into a store no daemon
 * holds (for seeding a demo or migrating history), with the same admission checks, committed by the
 * daemon's own journal writer. Each line may carry `admitted_at`, which must not decrease (the writer
 * keeps it, or refuses the line), and `source` (default: the source that writes its kind).
 */
import * as fs from "node:fs";
import { defaultSource, isProducerSource, type Source, sourceRefusal } from "../../../core/sources.js";
import { storePath as defaultStorePath } from "../../config/paths.js";
import { parseRfc3339, parseWireEvent } from "../../journal/event-format.js";
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_QUEUE_LIMIT,
  type ImportedOffer,
  type ImportResult,
  JournalWriter,
} from "../../journal/journal-writer.js";
import { jsonLines, type Line } from "../../journal/json-lines.js";
import { openStore } from "../../store/open-store.js";
import { Stores } from "../../store/stores.js";
import type { JournalLog } from "../../store/write-ports.js";
import { DaemonMetrics } from "../../support/metrics.js";
import { EXIT, type Io } from "../io.js";

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
  const writer = importWriter(new Stores(store).journalLog());
  let imported = 0;
  let failed = 0;
  const refuse = (n: number, why: string) => {
    failed++;
    io.err(`${file}:${n}: ${why}`);
  };
  // The lines since the last commit, in order: refused already, or offered with the text of their
  // `admitted_at`, which the writer may yet refuse.
  let pending: Pending[] = [];
  const commit = async () => {
    const offered = pending.filter((p) => "offer" in p);
    const results = await writer.importNow(offered.map((p) => p.offer));
    let k = 0;
    for (const p of pending) {
      if (!("offer" in p)) {
        refuse(p.n, p.why);
        continue;
      }
      const r = results[k++] as ImportResult;
      if (r.kind === "committed") imported++;
      else refuse(p.n, `admitted_at ${p.admittedAt} is earlier than the row before it; it must not decrease`);
    }
    pending = [];
  };
  try {
    for await (const line of jsonLines(input)) {
      pending.push(importLine(line));
      if (pending.length >= IMPORT_BATCH) await commit();
    }
    await commit();
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

/** Lines committed together: one transaction each, as the writer's batches. */
const IMPORT_BATCH = 1_000;

/** A line refused by its own checks, or offered to the writer with its `admitted_at` as written. */
type Pending =
  | { readonly n: number; readonly why: string }
  | { readonly n: number; readonly offer: ImportedOffer; readonly admittedAt: string };

/** The daemon's writer, committing the lines of a store no daemon holds, where nobody waits on a commit. */
function importWriter(log: JournalLog): JournalWriter {
  return new JournalWriter(log, {
    queueLimit: DEFAULT_QUEUE_LIMIT,
    batchSize: DEFAULT_BATCH_SIZE,
    clock: Date.now,
    metrics: new DaemonMetrics(),
    onCommitted: () => {},
    onError: () => {},
  });
}

/** One line checked as `journal append` checks an event, with its `admitted_at` and `source`. */
function importLine(line: Line): Pending {
  if ("error" in line) return { n: line.n, why: line.error };
  const { n } = line;
  const parsed = parseWireEvent(line.value, { importLine: true });
  if (!parsed.ok) return { n, why: parsed.problems.map((p) => p.message).join("; ") };
  const obj = line.value as Record<string, unknown>;
  let admittedAt: number | undefined;
  if (obj.admitted_at !== undefined) {
    admittedAt = typeof obj.admitted_at === "string" ? parseRfc3339(obj.admitted_at) : undefined;
    if (admittedAt === undefined) return { n, why: "admitted_at must be an RFC 3339 time" };
  }
  let source: Source = defaultSource(parsed.kind, parsed.event.type);
  if (obj.source !== undefined) {
    if (typeof obj.source !== "string" || !(isProducerSource(obj.source) || obj.source === "tick"))
      return { n, why: "source must be one of observer, ledger, loopguard, graph, facts, tick" };
    source = obj.source as Source;
  }
  const refusal = sourceRefusal(source, parsed.kind, parsed.event.type);
  if (refusal !== undefined) return { n, why: refusal };
  return {
    n,
    offer: {
      kind: parsed.kind,
      source,
      event: parsed.event,
      ...(admittedAt === undefined ? {} : { admittedAt }),
    },
    admittedAt: String(obj.admitted_at),
  };
}
