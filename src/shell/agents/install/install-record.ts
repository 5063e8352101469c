/**
 * The record of what `harness agents install` did, kept at `$XDG_STATE_HOME/harness/agents/installs.json`
 * (0600): each install (agent, harness, scope, settings file, mode, the keys it created there, whether it
 * created the file), and per harness the ids of the two producer tokens it minted. Uninstall reads it to
 * remove exactly what install added and to revoke tokens no install uses any more; `harness doctor`
 * reads it to show what is installed. A record that does not parse is an error naming the file, never
 * silently replaced: it is the only list of the tokens to revoke.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { HOOK_MODES, type HookMode } from "../adapters/adapter.js";
import { type HookFailMode, isHookFailMode } from "../ingest/fail-mode.js";
import type { ProducerRole } from "./agent-paths.js";

export interface InstallEntry {
  /** The agent's name (an agent this build does not know is kept, and doctor says so). */
  readonly agent: string;
  readonly harness: string;
  readonly scope: "project" | "user";
  /** The settings file, absolute. */
  readonly file: string;
  readonly mode: HookMode;
  /** `--fail closed|open`; absent, the harness follows `[agents] on_unreachable`. */
  readonly fail?: HookFailMode;
  /** A remote install's daemon, `https://host:port` (decision 0017); absent, the local daemon. */
  readonly daemon?: string;
  /** The keys install created in the file (`hooks`, `hooks.<Event>`), removed when uninstall empties them. */
  readonly created: readonly string[];
  /** Install created the file: uninstall removes it when nothing else is left in it. */
  readonly createdFile: boolean;
  readonly installedAt: string;
}

export interface TokenEntry {
  readonly id: string;
  readonly file: string;
}

export interface InstallRecord {
  readonly installs: readonly InstallEntry[];
  /** Per harness, the producer tokens minted for its hooks. */
  readonly tokens: Readonly<Record<string, Readonly<Record<ProducerRole, TokenEntry>>>>;
}

export const EMPTY_RECORD: InstallRecord = { installs: [], tokens: {} };

export class InstallRecordError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = "InstallRecordError";
  }
}

const isString = (v: unknown): v is string => typeof v === "string";

function entryOf(v: unknown): InstallEntry | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const e = v as Record<string, unknown>;
  if (
    !isString(e.agent) ||
    e.agent === "" ||
    !isString(e.harness) ||
    (e.scope !== "project" && e.scope !== "user") ||
    !isString(e.file) ||
    !isString(e.mode) ||
    !(HOOK_MODES as readonly string[]).includes(e.mode) ||
    (e.fail !== undefined && !isHookFailMode(e.fail as string)) ||
    (e.daemon !== undefined && !(isString(e.daemon) && e.daemon.startsWith("https://"))) ||
    !Array.isArray(e.created) ||
    !e.created.every(isString) ||
    typeof e.createdFile !== "boolean" ||
    !isString(e.installedAt)
  )
    return undefined;
  return e as unknown as InstallEntry;
}

function tokenOf(v: unknown): TokenEntry | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const t = v as Record<string, unknown>;
  return isString(t.id) && isString(t.file) ? { id: t.id, file: t.file } : undefined;
}

export function readInstallRecord(file: string): InstallRecord {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return EMPTY_RECORD;
    throw new InstallRecordError(file, `cannot read the record of installs: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InstallRecordError(file, `the record of installs is not JSON: ${(e as Error).message}`);
  }
  const bad = (what: string) => new InstallRecordError(file, `the record of installs is damaged: ${what}`);
  if (typeof value !== "object" || value === null) throw bad("not an object");
  const v = value as Record<string, unknown>;
  if (!Array.isArray(v.installs)) throw bad("no installs list");
  const installs: InstallEntry[] = [];
  for (const [i, e] of v.installs.entries()) {
    const entry = entryOf(e);
    if (entry === undefined) throw bad(`install ${i + 1}`);
    installs.push(entry);
  }
  const tokens: Record<string, Record<ProducerRole, TokenEntry>> = {};
  if (typeof v.tokens !== "object" || v.tokens === null) throw bad("no tokens table");
  for (const [harness, t] of Object.entries(v.tokens as Record<string, unknown>)) {
    const pair = t as Record<string, unknown>;
    const observer = tokenOf(pair?.observer);
    const ledger = tokenOf(pair?.ledger);
    if (observer === undefined || ledger === undefined) throw bad(`the tokens of ${harness}`);
    tokens[harness] = { observer, ledger };
  }
  return { installs, tokens };
}

export function writeInstallRecord(file: string, record: InstallRecord): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

const sameInstall = (a: InstallEntry, b: Pick<InstallEntry, "agent" | "harness" | "file">): boolean =>
  a.agent === b.agent && a.harness === b.harness && a.file === b.file;

export const findInstall = (
  record: InstallRecord,
  key: Pick<InstallEntry, "agent" | "harness" | "file">,
): InstallEntry | undefined => record.installs.find((e) => sameInstall(e, key));

/** The record with `entry` in place of any install of the same agent, harness and file. */
export const withInstall = (record: InstallRecord, entry: InstallEntry): InstallRecord => ({
  ...record,
  installs: [...record.installs.filter((e) => !sameInstall(e, entry)), entry],
});

export const withoutInstall = (
  record: InstallRecord,
  key: Pick<InstallEntry, "agent" | "harness" | "file">,
): InstallRecord => ({ ...record, installs: record.installs.filter((e) => !sameInstall(e, key)) });

export const withTokens = (
  record: InstallRecord,
  harness: string,
  tokens: Readonly<Record<ProducerRole, TokenEntry>> | undefined,
): InstallRecord => {
  const rest = Object.fromEntries(Object.entries(record.tokens).filter(([h]) => h !== harness));
  return { ...record, tokens: tokens === undefined ? rest : { ...rest, [harness]: tokens } };
};
