/**
 * `harness hook claude-code|codex|codex-notify`: the command hook, a thin forwarder. It reads the hook's
 * payload (stdin, capped; Codex's notify gives it as the last argument), posts it unchanged to the
 * daemon's hook endpoint over the Unix socket as raw HTTP/1.1 (`raw-http.ts`), and prints the daemon's answer. The
 * mapping to rows is the daemon's (`ingest.ts`), so this module loads no CEL, SQLite, CLI framework or
 * RPC library: Node built-ins and a few small modules of this folder. `bin.ts` dispatches here before
 * anything else is imported, and the build bundles it into `bin.cjs` (`scripts/bundle-bin.ts`).
 *
 * When the daemon cannot be reached within `--timeout` (default 5 s), the call is spooled (`spool.ts`)
 * and PreToolUse is answered by `[agents] on_unreachable` (default allow). Waiting calls are delivered,
 * in order, before the call's own by the next call that reaches the daemon. The exit code is 0, or 1 for
 * a call that could not be used (a clear line on stderr says why); never 2, which would block a tool
 * with no reason.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { globalConfigPath, socketPath, stateHome } from "../config/paths.js";
import { unreachableAnswer } from "./hook-answer.js";
import { type Gate, type HookAdapter, isHookAdapter, type Payload, rowPayload } from "./hook-event.js";
import {
  HOOK_AT_HEADER,
  HOOK_KEY_HEADER,
  HOOK_PATH_PREFIX,
  LEDGER_TOKEN_HEADER,
  MAX_HOOK_PAYLOAD_BYTES,
  NOTE_HEADER,
  ROW_HEADER,
} from "./hook-limits.js";
import { RawHttpError, rawPost } from "./raw-http.js";
import { Spool, type SpoolEntry } from "./spool.js";

export interface HookIo {
  readonly env: NodeJS.ProcessEnv;
  /** The payload on stdin, at most `limit` bytes; `undefined` when it is longer (`hook-stdio.ts`). */
  readonly stdin: (limit: number) => Promise<Buffer | undefined>;
  readonly out: (text: string) => void;
  readonly err: (line: string) => void;
}

interface HookArgs {
  readonly adapter: HookAdapter;
  readonly harness: string;
  readonly observerTokenFile: string;
  readonly ledgerTokenFile: string;
  readonly socket?: string;
  readonly config?: string;
  readonly timeoutMs: number;
  /** codex-notify: the payload, given as the last argument. */
  readonly payloadArg?: string;
}

const DEFAULT_TIMEOUT_MS = 5000;
const USAGE =
  "usage: harness hook claude-code|codex|codex-notify --harness NAME --observer-token FILE --ledger-token FILE [--socket PATH] [--config PATH] [--timeout MS] [JSON]";

/** The spool's directory under a state home: `$XDG_STATE_HOME/harness/agents/spool`. */
export const spoolDir = (env: NodeJS.ProcessEnv): string =>
  path.join(stateHome(env), "harness", "agents", "spool");

function parseArgs(argv: readonly string[]): HookArgs | string {
  const [adapter, ...rest] = argv;
  if (adapter === undefined || !isHookAdapter(adapter))
    return `unknown adapter ${JSON.stringify(adapter ?? "")}`;
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else if (a.startsWith("--")) {
      const v = rest[i + 1];
      if (v === undefined) return `${a} needs a value`;
      flags.set(a.slice(2), v);
      i++;
    } else positional.push(a);
  }
  for (const name of flags.keys())
    if (!["harness", "observer-token", "ledger-token", "socket", "config", "timeout"].includes(name))
      return `unknown option --${name}`;
  const harness = flags.get("harness");
  const observer = flags.get("observer-token");
  const ledger = flags.get("ledger-token");
  if (harness === undefined || observer === undefined || ledger === undefined)
    return "--harness, --observer-token and --ledger-token are required";
  const timeout = Number(flags.get("timeout") ?? DEFAULT_TIMEOUT_MS);
  if (!Number.isSafeInteger(timeout) || timeout < 1) return "--timeout must be a positive number of ms";
  const socket = flags.get("socket");
  const config = flags.get("config");
  const payloadArg = positional.at(-1);
  return {
    adapter,
    harness,
    observerTokenFile: path.resolve(observer),
    ledgerTokenFile: path.resolve(ledger),
    ...(socket === undefined ? {} : { socket }),
    ...(config === undefined ? {} : { config }),
    timeoutMs: timeout,
    ...(adapter === "codex-notify" && payloadArg !== undefined ? { payloadArg } : {}),
  };
}

/** A token file's token, or why it cannot be used (its text is never printed). */
function readToken(file: string): string | { problem: string } {
  try {
    const st = fs.statSync(file);
    if ((st.mode & 0o077) !== 0)
      return { problem: `${file} is readable by group or others; run chmod 600 ${file}` };
    const token = fs.readFileSync(file, "utf8").trim();
    return /^[\x21-\x7e]+$/.test(token) ? token : { problem: `${file} does not hold a token` };
  } catch (e) {
    return { problem: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly row: string | undefined;
  readonly note: string | undefined;
}

/**
 * Whether the daemon's hook endpoint answered: a 5xx is the daemon failing, and a 404 a daemon without
 * the endpoint (not yet upgraded, or started without it); both are treated as unreachable, so the call
 * waits in the spool rather than being lost.
 */
const answered = (reply: Reply): boolean => reply.status < 500 && reply.status !== 404;

/** A failure to reach the daemon at all (as opposed to an answer it gave). */
class Unreachable extends Error {}

async function post(
  socket: string,
  adapter: string,
  harness: string,
  tokens: { observer: string; ledger: string },
  body: Uint8Array,
  deadline: number,
  spooled?: { at: number; key: string },
): Promise<Reply> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new Unreachable("timed out");
  try {
    const res = await rawPost(
      socket,
      `${HOOK_PATH_PREFIX}${adapter}?harness=${encodeURIComponent(harness)}`,
      {
        "Content-Type": "application/json",
        Authorization: `Bearer ${tokens.observer}`,
        [LEDGER_TOKEN_HEADER]: tokens.ledger,
        ...(spooled === undefined
          ? {}
          : { [HOOK_AT_HEADER]: String(spooled.at), [HOOK_KEY_HEADER]: spooled.key }),
      },
      body,
      remaining,
    );
    return {
      status: res.status,
      body: res.body.toString("utf8"),
      row: res.headers.get(ROW_HEADER),
      note: res.headers.get(NOTE_HEADER),
    };
  } catch (e) {
    throw e instanceof RawHttpError ? new Unreachable(e.message) : e;
  }
}

/** `[agents] on_unreachable` and `[server] socket` from the global config: read only when needed. */
async function configFallback(
  args: HookArgs,
  env: NodeJS.ProcessEnv,
): Promise<{ onUnreachable: "allow" | "deny"; socket?: string; problem?: string }> {
  const file = args.config ?? globalConfigPath(env);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { onUnreachable: "allow" };
    return { onUnreachable: "allow", problem: `cannot read ${file}` };
  }
  try {
    const { parse } = await import("smol-toml");
    const doc = parse(text) as { agents?: { on_unreachable?: unknown }; server?: { socket?: unknown } };
    const on = doc.agents?.on_unreachable;
    const socket = doc.server?.socket;
    return {
      onUnreachable: on === "deny" ? "deny" : "allow",
      ...(typeof socket === "string" && socket !== ""
        ? { socket: path.resolve(path.dirname(file), socket) }
        : {}),
    };
  } catch {
    return { onUnreachable: "allow", problem: `${file} is not valid TOML (harness config check says where)` };
  }
}

function gateOf(adapter: HookAdapter, p: Payload | undefined): Gate {
  const event = adapter === "codex-notify" ? undefined : p?.hook_event_name;
  return event === "PreToolUse" ? "tool" : event === "UserPromptSubmit" ? "prompt" : "turn";
}

/** Why a payload could never become a row (no session or event name), so is not worth spooling. */
function missingIds(adapter: HookAdapter, p: Payload): string | undefined {
  const keys = adapter === "codex-notify" ? ["thread-id", "type"] : ["session_id", "hook_event_name"];
  const missing = keys.find((k) => typeof p[k] !== "string" || p[k] === "");
  return missing === undefined ? undefined : `has no string ${missing}`;
}

function parseJsonObject(body: Buffer): Payload | undefined {
  try {
    const v: unknown = JSON.parse(body.toString("utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Payload) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Delivers the spool in order. False when the daemon could not be reached (the rest stays); entries
 * the daemon refuses go to `failed/`.
 */
async function drain(spool: Spool, socket: string, deadline: number, io: HookIo): Promise<boolean> {
  if (spool.entries().length === 0) return true;
  const unlock = spool.lock();
  if (unlock === undefined) return true; // another call is delivering them
  const tokens = new Map<string, string | { problem: string }>();
  const token = (file: string) => {
    if (!tokens.has(file)) tokens.set(file, readToken(file));
    return tokens.get(file) as string | { problem: string };
  };
  try {
    // Entries spooled meanwhile by other calls are delivered too, until none is left.
    for (let names = spool.entries(); names.length > 0; names = spool.entries()) {
      for (const name of names) {
        const entry = spool.read(name);
        const observer = entry === undefined ? undefined : token(entry.observer_token_file);
        const ledger = entry === undefined ? undefined : token(entry.ledger_token_file);
        if (entry === undefined || typeof observer !== "string" || typeof ledger !== "string") {
          io.err(
            `harness hook: spooled call ${name} cannot be delivered (unreadable, or its token files are); kept in ${spool.dir}/failed`,
          );
          spool.fail(name);
          continue;
        }
        const reply = await post(
          socket,
          entry.adapter,
          entry.harness,
          { observer, ledger },
          Buffer.from(JSON.stringify(entry.payload)),
          deadline,
          { at: entry.at, key: name.replace(/\.json$/, "") },
        ).catch((e: unknown) => {
          if (e instanceof Unreachable) return undefined;
          throw e;
        });
        if (reply === undefined || !answered(reply) || reply.row === "dropped") return false;
        if (reply.status !== 200) {
          io.err(
            `harness hook: the daemon refused spooled call ${name}: ${reply.note ?? `HTTP ${reply.status}`}; kept in ${spool.dir}/failed`,
          );
          spool.fail(name);
        } else spool.remove(name);
      }
    }
    return true;
  } finally {
    unlock();
  }
}

export async function runHook(argv: readonly string[], io: HookIo): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === "string") {
    io.err(`harness hook: ${args}\n${USAGE}`);
    return 1;
  }
  const body =
    args.payloadArg !== undefined
      ? Buffer.from(args.payloadArg, "utf8")
      : await io.stdin(MAX_HOOK_PAYLOAD_BYTES);
  if (body === undefined || body.byteLength > MAX_HOOK_PAYLOAD_BYTES) {
    io.err(
      `harness hook: the payload is larger than ${MAX_HOOK_PAYLOAD_BYTES} bytes; not recorded, the tool runs`,
    );
    return 1;
  }
  const observer = readToken(args.observerTokenFile);
  const ledger = readToken(args.ledgerTokenFile);
  if (typeof observer !== "string" || typeof ledger !== "string") {
    const problem = typeof observer !== "string" ? observer.problem : (ledger as { problem: string }).problem;
    io.err(`harness hook: ${problem}; not recorded, the tool runs`);
    return 1;
  }
  const deadline = Date.now() + args.timeoutMs;
  const spool = new Spool(spoolDir(io.env));
  let socket = args.socket ?? socketPath(io.env);
  let fallback: Awaited<ReturnType<typeof configFallback>> | undefined;
  const send = () =>
    drain(spool, socket, deadline, io).then((reached) =>
      reached
        ? post(socket, args.adapter, args.harness, { observer, ledger }, body, deadline).catch(
            (e: unknown) => {
              if (e instanceof Unreachable) return undefined;
              throw e;
            },
          )
        : undefined,
    );
  let reply = await send();
  if (reply === undefined && args.socket === undefined) {
    // The config may name another socket: read only now, so the usual call never parses it.
    fallback = await configFallback(args, io.env);
    if (fallback.socket !== undefined && fallback.socket !== socket) {
      socket = fallback.socket;
      reply = await send();
    }
  }
  if (reply !== undefined && answered(reply)) {
    if (reply.note !== undefined || reply.status !== 200)
      io.err(`harness hook: ${reply.note ?? `the daemon answered HTTP ${reply.status}`}`);
    if (reply.status !== 200) return 1;
    if (reply.row === "dropped") spoolCall(spool, args, body, io, false);
    if (reply.body !== "") io.out(reply.body);
    return 0;
  }
  fallback ??= await configFallback(args, io.env);
  if (fallback.problem !== undefined) io.err(`harness hook: ${fallback.problem}`);
  const payload = parseJsonObject(body);
  const why = reply === undefined ? `cannot be reached at ${socket}` : `answered HTTP ${reply.status}`;
  const unusable = payload === undefined ? "is not a JSON object" : missingIds(args.adapter, payload);
  if (unusable !== undefined) {
    io.err(`harness hook: the payload ${unusable}, and the daemon ${why}; not recorded, the tool runs`);
    return 1;
  }
  const gate = gateOf(args.adapter, payload as Payload);
  if (gate !== "tool") spoolCall(spool, args, body, io, true, why);
  else
    io.err(
      `harness hook: the daemon ${why}; PreToolUse ${fallback.onUnreachable === "deny" ? "denied" : "allowed"} by [agents] on_unreachable`,
    );
  const answer = unreachableAnswer(args.adapter, gate, fallback.onUnreachable);
  if (answer !== "") io.out(answer);
  return 0;
}

function spoolCall(
  spool: Spool,
  args: HookArgs,
  body: Buffer,
  io: HookIo,
  unreachable: boolean,
  why = "",
): void {
  const payload = parseJsonObject(body);
  if (payload === undefined) return;
  const entry: SpoolEntry = {
    v: 1,
    adapter: args.adapter,
    harness: args.harness,
    observer_token_file: args.observerTokenFile,
    ledger_token_file: args.ledgerTokenFile,
    at: Date.now(),
    payload: rowPayload(payload),
  };
  let spooled: boolean;
  try {
    spooled = spool.add(entry);
  } catch (e) {
    io.err(
      `harness hook: cannot spool the call in ${spool.dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; it is lost`,
    );
    return;
  }
  const cause = unreachable ? `the daemon ${why}` : "the daemon's queue was full";
  io.err(
    spooled
      ? `harness hook: ${cause}; the call waits in ${spool.dir} for the next call that reaches it`
      : `harness hook: ${cause}, and the spool ${spool.dir} is full; the call is dropped and counted in its overflow file`,
  );
}
