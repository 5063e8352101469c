/**
 * `harness journal import FILE`: the lines `journal append` takes, written into a store no daemon
 * holds (for seeding a demo or migrating history), with the same admission checks. Each line may carry
 * `admitted_at`, which must not decrease, and `source` (default: the source that writes its kind).
 */
import * as fs from "node:fs";
import { defaultSource, isProducerSource, type Source, sourceRefusal } from "../../../core/sources.js";
import { storePath as defaultStorePath } from "../../config/paths.js";
import { parseRfc3339, parseWireEvent } from "../../journal/event-format.js";
import { jsonLines } from "../../journal/json-lines.js";
import { JournalTable } from "../../store/journal-table.js";
import { openStore } from "../../store/open-store.js";
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
      const parsed = parseWireEvent(line.value, { importLine: true });
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
      const refusal = sourceRefusal(source, parsed.kind, parsed.event.type);
      if (refusal !== undefined) {
        refuse(line.n, refusal);
        continue;
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
