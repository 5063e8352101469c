/** Shared fixtures for the RPC tests: temporary directories, credential files and a recording `admit`. */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProducerSource } from "../../../src/core/sources.js";
import type { AdmitResult } from "../../../src/shell/journal/admit.js";
import { parseWireEvent } from "../../../src/shell/journal/event-format.js";
import type { Admit } from "../../../src/shell/rpc/journal-service.js";

export interface TempDir {
  readonly path: string;
  remove(): void;
}

export function tempDir(): TempDir {
  const path = mkdtempSync(join(tmpdir(), "harness-rpc-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const newToken = (): string => randomBytes(24).toString("base64url");

/** Writes `content` to `dir/name` with `mode` and returns its path. */
export function writeTokenFile(dir: string, name: string, content: string, mode = 0o600): string {
  const file = join(dir, name);
  writeFileSync(file, content, { mode });
  chmodSync(file, mode); // the umask may have narrowed the mode asked for
  return file;
}

export interface RecordingAdmit {
  readonly admit: Admit;
  readonly calls: { readonly source: ProducerSource; readonly events: readonly unknown[] }[];
}

/**
 * An `admit` that checks each event as the daemon does (`parseWireEvent`) and admits it with the next
 * seq, dropping once `capacity` rows are queued.
 */
export function recordingAdmit(capacity = Number.POSITIVE_INFINITY): RecordingAdmit {
  const calls: RecordingAdmit["calls"] = [];
  let seq = 0;
  const admit: Admit = async (source, events) => {
    calls.push({ source, events });
    return events.map((e): AdmitResult => {
      const parsed = parseWireEvent(e);
      if (!parsed.ok)
        return {
          kind: "rejected",
          code: (parsed.problems[0] as (typeof parsed.problems)[number]).reason,
          reason: parsed.problems.map((p) => p.message).join("; "),
        };
      if (seq >= capacity) return { kind: "dropped" };
      seq += 1;
      return { kind: "admitted", seq };
    });
  };
  return { admit, calls };
}
