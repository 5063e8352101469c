/**
 * `harness store backup PATH`: an online, consistent copy of the store while the daemon runs
 * (`../../store/store-backup.ts`). Restoring is a copy back with the daemon stopped (docs/cli.md).
 */
import { storePath as defaultStorePath } from "../../config/paths.js";
import { backupStore } from "../../store/store-backup.js";
import { EXIT, type Io } from "../io.js";
import { printable } from "../render/printable.js";

export async function runStoreBackup(
  target: string,
  options: { readonly store?: string; readonly json?: boolean },
  io: Io,
): Promise<number> {
  try {
    const r = await backupStore(options.store ?? defaultStorePath(io.env), target);
    if (options.json === true)
      io.out(
        JSON.stringify({
          source: r.source,
          path: r.path,
          bytes: r.bytes,
          schema_version: r.schemaVersion,
          journal_rows: r.journalRows,
          last_seq: r.lastSeq,
        }),
      );
    else
      io.out(
        `backed up ${printable(r.source)} to ${printable(r.path)}: ${r.journalRows} journal rows up to seq ${r.lastSeq}, schema ${r.schemaVersion}, ${r.bytes} bytes, integrity ok`,
      );
    return EXIT.ok;
  } catch (e) {
    io.err(`harness store backup: ${printable((e as Error).message)}`);
    return EXIT.failed;
  }
}
