/**
 * `harness hook <format>` (a hook format of the adapter registry): the command hook, a thin forwarder.
 * It reads the hook's payload (stdin, capped, or the last argument for a format that gets it there),
 * posts it unchanged to the daemon's hook endpoint over the Unix socket as raw HTTP/1.1
 * (`raw-http.ts`), and prints the daemon's answer. The mapping to rows is the daemon's
 * (`../ingest/ingest.ts`), so this module loads no CEL, SQLite, CLI framework or RPC library: Node
 * built-ins, the adapters' records and a few small modules of agents/. `bin.ts` dispatches here before
 * anything else is imported, and the build bundles it into `bin.cjs` (`scripts/bundle-bin.ts`).
 *
 * Installed hooks reach it through the fast path (`harness-hook.sh`: sh and curl, no Node start), which
 * hands it every call it cannot take itself, with the call's nonce (`--call`, for the same idempotency
 * key) and the time left.
 *
 * A remote install (`--daemon https://host:port`, decision 0017) posts over https instead, to the remote
 * daemon's hook endpoint, with `--ca-file` and, under mutual TLS, `--client-cert`/`--client-key`; it
 * computes the call's git facts here (`local-facts.ts`), since the daemon cannot see this machine's
 * disk, and sends them, with this machine's clock, in an envelope around the payload
 * (`../ingest/supplied-facts.ts`). A spooled call keeps its facts and its daemon.
 *
 * When the daemon cannot be reached within `--timeout` (default 5 s), the call is spooled (`spool.ts`)
 * and PreToolUse is answered by the harness's fail mode: `--fail closed|open` as install wrote it, else
 * `[agents] on_unreachable` (default allow; `../ingest/fail-mode.ts`). Waiting calls are delivered,
 * in order, before the call's own by the next call that reaches the daemon. The exit code is 0, or 1 for
 * a call that could not be used (a clear line on stderr says why); never 2, which would block a tool
 * with no reason.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { globalConfigPath, socketPath, stateHome } from "../../config/paths.js";
import { readTokenFileSync } from "../../support/token-file.js";
import { VERSION_HEADER } from "../../support/versions-meet.js";
import { type AdapterRegistry, AGENTS } from "../adapters/registry.js";
import {
  FAIL_QUERY,
  failPolicy,
  HOOK_FAIL_MODES,
  type HookFailMode,
  isHookFailMode,
} from "../ingest/fail-mode.js";
import { unreachableAnswer } from "../ingest/hook-answer.js";
import { type Payload, rowPayload, str } from "../ingest/hook-event.js";
import type { HookFormat, HookFormats } from "../ingest/hook-format.js";
import { forwarderKey, isCallNonce, runOf } from "../ingest/hook-key.js";
import {
  HOOK_AT_HEADER,
  HOOK_FACTS_HEADER,
  HOOK_KEY_HEADER,
  HOOK_PATH_PREFIX,
  LEDGER_TOKEN_HEADER,
  MAX_HOOK_PAYLOAD_BYTES,
  NOTE_HEADER,
  type RemoteDaemon,
  ROW_HEADER,
} from "../ingest/hook-limits.js";
import { envelopeBody, type SuppliedFacts } from "../ingest/supplied-facts.js";
import { FORWARDER_VERSION } from "./forwarder-version.js";
import { httpsPost } from "./https-post.js";
import { localFacts } from "./local-facts.js";
import { RawHttpError, type RawResponse, rawPost } from "./raw-http.js";
import { keyOf, MAX_TRIES, Spool, type SpoolEntry } from "./spool.js";

export interface HookIo {
  readonly env: NodeJS.ProcessEnv;
  /** The payload on stdin, at most `limit` bytes; `undefined` when it is longer (`hook-stdio.ts`). */
  readonly stdin: (limit: number) => Promise<Buffer | undefined>;
  readonly out: (text: string) => void;
  readonly err: (line: string) => void;
}

interface HookArgs {
  readonly format: HookFormat;
  readonly harness: string;
  readonly observerTokenFile: string;
  readonly ledgerTokenFile: string;
  readonly socket?: string;
  readonly config?: string;
  readonly timeoutMs: number;
  /** The harness's own fail mode; absent, `[agents] on_unreachable` decides. */
  readonly fail?: HookFailMode;
  /** The payload, for a format that gets it as the last argument. */
  readonly payloadArg?: string;
  /** The call's nonce, from the fast path that handed the call over (`harness-hook.sh`). */
  readonly call?: string;
  /** A remote install's daemon: its hook endpoint over https, never the socket. */
  readonly daemon?: RemoteDaemon;
}

const DEFAULT_TIMEOUT_MS = 5000;
const usage = (formats: HookFormats): string =>
  `usage: harness hook ${formats.hookNames.join("|")} --harness NAME --observer-token FILE --ledger-token FILE [--socket PATH | --daemon https://HOST:PORT [--ca-file F] [--client-cert F --client-key F]] [--config PATH] [--timeout MS] [--fail closed|open] [--call NONCE] [JSON]`;

/** The options a remote install adds. */
const REMOTE_FLAGS = ["daemon", "ca-file", "client-cert", "client-key"];

/** The spool's directory under a state home: `$XDG_STATE_HOME/harness/agents/spool`. */
export const spoolDir = (env: NodeJS.ProcessEnv): string =>
  path.join(stateHome(env), "harness", "agents", "spool");

function parseArgs(argv: readonly string[], formats: HookFormats): HookArgs | string {
  const [name, ...rest] = argv;
  const format = name === undefined ? undefined : formats.hook(name);
  if (format === undefined) return `unknown adapter ${JSON.stringify(name ?? "")}`;
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
    if (
      ![
        "harness",
        "observer-token",
        "ledger-token",
        "socket",
        "config",
        "timeout",
        "fail",
        "call",
        ...REMOTE_FLAGS,
      ].includes(name)
    )
      return `unknown option --${name}`;
  const harness = flags.get("harness");
  const observer = flags.get("observer-token");
  const ledger = flags.get("ledger-token");
  if (harness === undefined || observer === undefined || ledger === undefined)
    return "--harness, --observer-token and --ledger-token are required";
  const timeout = Number(flags.get("timeout") ?? DEFAULT_TIMEOUT_MS);
  if (!Number.isSafeInteger(timeout) || timeout < 1) return "--timeout must be a positive number of ms";
  const fail = flags.get("fail");
  if (fail !== undefined && !isHookFailMode(fail)) return `--fail must be ${HOOK_FAIL_MODES.join(" or ")}`;
  const call = flags.get("call");
  if (call !== undefined && !isCallNonce(call))
    return "--call must be a call nonce (16 to 64 hex digits or dashes)";
  const socket = flags.get("socket");
  const daemon = remoteDaemon(flags);
  if (typeof daemon === "string") return daemon;
  if (daemon !== undefined && socket !== undefined) return "give --socket or --daemon, not both";
  const config = flags.get("config");
  const payloadArg = positional.at(-1);
  return {
    format,
    harness,
    observerTokenFile: path.resolve(observer),
    ledgerTokenFile: path.resolve(ledger),
    ...(socket === undefined ? {} : { socket }),
    ...(config === undefined ? {} : { config }),
    timeoutMs: timeout,
    ...(fail === undefined ? {} : { fail }),
    ...(format.payloadFrom === "argument" && payloadArg !== undefined ? { payloadArg } : {}),
    ...(call === undefined ? {} : { call }),
    ...(daemon === undefined ? {} : { daemon }),
  };
}

/** `--daemon` and its TLS files, or why they cannot be used: https only, a token never in plaintext. */
function remoteDaemon(flags: ReadonlyMap<string, string>): RemoteDaemon | string | undefined {
  const url = flags.get("daemon");
  if (url === undefined) {
    const stray = REMOTE_FLAGS.find((f) => flags.has(f));
    return stray === undefined ? undefined : `--${stray} is for --daemon`;
  }
  let origin: URL;
  try {
    origin = new URL(url);
  } catch {
    return "--daemon must be a URL, https://host:port";
  }
  if (origin.protocol !== "https:")
    return "--daemon must be https://host:port (tokens never cross the network in plaintext)";
  const cert = flags.get("client-cert");
  const key = flags.get("client-key");
  if ((cert === undefined) !== (key === undefined)) return "--client-cert and --client-key go together";
  const file = (f: string | undefined) => (f === undefined ? undefined : path.resolve(f));
  const ca = file(flags.get("ca-file"));
  return {
    url: origin.origin,
    ...(ca === undefined ? {} : { caFile: ca }),
    ...(cert === undefined ? {} : { clientCert: file(cert) as string, clientKey: file(key) as string }),
  };
}

/** Where a call goes: the daemon's socket, or a remote daemon over https. */
type Transport = { readonly socket: string } | { readonly daemon: RemoteDaemon };

const send = (
  t: Transport,
  target: string,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  timeoutMs: number,
): Promise<RawResponse> =>
  "socket" in t
    ? rawPost(t.socket, target, headers, body, timeoutMs)
    : httpsPost(t.daemon, target, headers, body, timeoutMs);

/**
 * A spooled call's transport: its remote daemon's, or the socket. An entry for the daemon this call goes
 * to is sent with this call's TLS files: the hook as installed now is the truth (a CA fixed since the
 * call was spooled, say).
 */
function transportOf(entry: SpoolEntry, socket: string, own: Transport): Transport {
  const d = entry.daemon;
  if (d === undefined) return { socket };
  if ("daemon" in own && own.daemon.url === d.url) return own;
  return {
    daemon: {
      url: d.url,
      ...(d.ca_file === undefined ? {} : { caFile: d.ca_file }),
      ...(d.client_cert === undefined ? {} : { clientCert: d.client_cert }),
      ...(d.client_key === undefined ? {} : { clientKey: d.client_key }),
    },
  };
}

/** A token file's token, or why it cannot be used (its text is never printed). */
function readToken(file: string): string | { problem: string } {
  const read = readTokenFileSync(file);
  return "token" in read ? read.token : { problem: read.problem };
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly row: string | undefined;
  readonly note: string | undefined;
}

/** The daemon's answer to a forwarder whose version does not meet its own: the fail mode answers. */
const VERSIONS_APART = 412;

/**
 * Whether the daemon's hook endpoint answered: a 5xx is the daemon failing, and a 404 a daemon without
 * the endpoint (not yet upgraded, or started without it); both are treated as unreachable, so the call
 * waits in the spool rather than being lost.
 */
const answered = (reply: Reply): boolean =>
  reply.status < 500 && reply.status !== 404 && reply.status !== VERSIONS_APART;

/** A failure to get an answer from the daemon (as opposed to an answer it gave). */
class Unreachable extends Error {
  constructor(
    message: string,
    /** Connected, or trying to, but no answer in time: the daemon may be up and stuck on this call. */
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

async function post(
  transport: Transport,
  /** The hook format's name: its endpoint's path. */
  hook: string,
  harness: string,
  tokens: { observer: string; ledger: string },
  body: Uint8Array,
  deadline: number,
  /**
   * The call's idempotency key; for a spooled call when the hook received it; for a live one the
   * harness's fail mode, which answers its attempt if the rules cannot judge it in time.
   */
  call: { key: string; at?: number; fail?: HookFailMode; facts?: boolean },
): Promise<Reply> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new Unreachable("timed out", true);
  try {
    const res = await send(
      transport,
      `${HOOK_PATH_PREFIX}${hook}?harness=${encodeURIComponent(harness)}${call.fail === undefined ? "" : `&${FAIL_QUERY}=${call.fail}`}`,
      {
        "Content-Type": "application/json",
        Authorization: `Bearer ${tokens.observer}`,
        [LEDGER_TOKEN_HEADER]: tokens.ledger,
        [HOOK_KEY_HEADER]: call.key,
        [VERSION_HEADER]: FORWARDER_VERSION,
        ...(call.at === undefined ? {} : { [HOOK_AT_HEADER]: String(call.at) }),
        ...(call.facts === true ? { [HOOK_FACTS_HEADER]: "1" } : {}),
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
    throw e instanceof RawHttpError ? new Unreachable(e.message, e.timedOut) : e;
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

/** Why a payload could never become a row (no session or event name), so is not worth spooling. */
function missingIds(format: HookFormat, p: Payload): string | undefined {
  const missing = [format.ids.session, format.ids.event].find((k) => typeof p[k] !== "string" || p[k] === "");
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

/** The share of `--timeout` git may take for a remote call's facts; past it the call goes without. */
const FACTS_SHARE = 0.2;
/** The share of `--timeout` the spool may take before the call's own request: the rest is the call's. */
const DRAIN_SHARE = 0.5;
const LOCK_POLL_MS = 20;
/**
 * A delivery that times out counts against its entry only if it was given this long, or was the
 * drain's first (it had the whole share): one cut short by the end of the share says nothing of it.
 */
const FAIR_TRY_MS = 1000;
/**
 * How long an entry spooled for another daemon than this call's may take: a host that is off or
 * firewalled shows as a timeout, and it must not spend this call's share, nor hold up its own entries.
 */
const FOREIGN_TRY_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The waiting entries of `run`: the calls of its session made before this one. */
function waitingOf(spool: Spool, run: string | undefined, formats: HookFormats): string[] {
  if (run === undefined) return [];
  return spool.entries().filter((name) => {
    const e = spool.read(name);
    const format = e === undefined ? undefined : formats.hook(e.adapter);
    return (
      e !== undefined &&
      format !== undefined &&
      isPayload(e.payload) &&
      runOf(format, e.harness, e.payload) === run
    );
  });
}

const isPayload = (v: unknown): v is Payload => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The drain lock, or undefined. When another call holds it, this call waits for it only while one
 * of its own session's calls is among the waiting ones (its rows must follow theirs), and not past
 * `until`; a call of another session goes on at once, so a slow drain never delays it.
 */
async function lockFor(
  spool: Spool,
  run: string | undefined,
  until: number,
  formats: HookFormats,
): Promise<(() => void) | undefined> {
  let mine: string[] | undefined;
  for (;;) {
    const unlock = spool.lock();
    if (unlock !== undefined) return unlock;
    mine ??= waitingOf(spool, run, formats);
    const waiting = new Set(spool.entries());
    if (!mine.some((name) => waiting.has(name)) || Date.now() + LOCK_POLL_MS >= until) return undefined;
    await sleep(LOCK_POLL_MS);
  }
}

/**
 * Delivers the spool in order, until `until`. `unreachable` when the daemon could not be reached at
 * all (the rest stays). An entry the daemon did not answer in time, or answered with a 5xx, has the
 * failure counted and the drain stops there, leaving the call its own time; at `MAX_TRIES` failures
 * it is set aside. Entries the daemon refuses go to `failed/`.
 */
async function drain(
  spool: Spool,
  socket: string,
  /** Where this call goes: its daemon unreachable, the call is too; another's only skips its entries. */
  own: Transport,
  until: number,
  run: string | undefined,
  io: HookIo,
  formats: HookFormats,
): Promise<"reached" | "unreachable"> {
  if (spool.entries().length === 0) return "reached";
  const unlock = await lockFor(spool, run, until, formats);
  if (unlock === undefined) return "reached"; // another call is delivering them
  const tokens = new Map<string, string | { problem: string }>();
  const token = (file: string) => {
    if (!tokens.has(file)) tokens.set(file, readToken(file));
    return tokens.get(file) as string | { problem: string };
  };
  let first = true;
  const ownKey = JSON.stringify(own);
  // Daemons found unreachable in this drain, and the entries left for them.
  const down = new Set<string>();
  const skipped = new Set<string>();
  const left = () => spool.entries().filter((n) => !skipped.has(n));
  try {
    // Entries spooled meanwhile by other calls are delivered too, until none is left.
    for (let names = left(); names.length > 0; names = left()) {
      for (const name of names) {
        if (Date.now() >= until) return "reached";
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
        const transport = transportOf(entry, socket, own);
        const key = JSON.stringify(transport);
        if (down.has(key)) {
          skipped.add(name);
          continue;
        }
        const foreign = key !== ownKey;
        const fair = first || until - Date.now() >= FAIR_TRY_MS;
        first = false;
        const payload = Buffer.from(JSON.stringify(entry.payload));
        const reply = await post(
          transport,
          entry.adapter,
          entry.harness,
          { observer, ledger },
          entry.facts === undefined ? payload : envelopeBody(payload, entry.facts, entry.at),
          foreign ? Math.min(until, Date.now() + FOREIGN_TRY_MS) : until,
          { at: entry.at, key: keyOf(name, entry), facts: entry.facts !== undefined },
        ).catch((e: unknown) => {
          if (e instanceof Unreachable) return e;
          throw e;
        });
        const unanswered =
          reply instanceof Unreachable || reply.status === 404 || reply.status === VERSIONS_APART;
        // Another daemon that does not answer, in time or at all, is passed over with all its entries,
        // counting no try: it says nothing of the entry, and this call's own entries go on.
        if (foreign && unanswered) {
          down.add(key);
          skipped.add(name);
          continue;
        }
        if (unanswered && !(reply instanceof Unreachable && reply.timedOut)) return "unreachable";
        if (reply instanceof Unreachable && !fair) return "reached";
        if (reply instanceof Unreachable || reply.status >= 500) {
          const why =
            reply instanceof Unreachable ? "was not answered in time" : `failed (HTTP ${reply.status})`;
          if (spool.countTry(name, entry))
            io.err(
              `harness hook: delivering spooled call ${name} ${why} ${MAX_TRIES} times; set aside in ${spool.dir}/set-aside (harness agents spool list)`,
            );
          if (!foreign) return "reached";
          down.add(key);
          skipped.add(name);
          continue;
        }
        if (reply.row === "dropped") return "reached"; // the daemon's queue is full: the rest waits
        if (reply.status !== 200) {
          io.err(
            `harness hook: the daemon refused spooled call ${name}: ${reply.note ?? `HTTP ${reply.status}`}; kept in ${spool.dir}/failed`,
          );
          spool.fail(name);
        } else spool.remove(name);
      }
    }
    return "reached";
  } finally {
    unlock();
  }
}

/**
 * One command hook call, its format found in `agents` (the registry this build knows, unless a caller
 * hands another): the exit code.
 */
export async function runCommandHook(
  argv: readonly string[],
  io: HookIo,
  agents: AdapterRegistry = AGENTS,
): Promise<number> {
  const args = parseArgs(argv, agents);
  if (typeof args === "string") {
    io.err(`harness hook: ${args}\n${usage(agents)}`);
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
  const start = Date.now();
  const deadline = start + args.timeoutMs;
  const drainUntil = start + Math.floor(args.timeoutMs * DRAIN_SHARE);
  const payload = parseJsonObject(body);
  const { format } = args;
  const unusable = payload === undefined ? "is not a JSON object" : missingIds(format, payload);
  // Sent with the live request and kept with a spooled copy: delivered twice, admitted once.
  const key = forwarderKey(format, args.harness, payload ?? {}, args.call);
  const run =
    payload === undefined || unusable !== undefined ? undefined : runOf(format, args.harness, payload);
  const gate = format.gate(payload === undefined ? undefined : str(payload, format.ids.event));
  const spool = new Spool(spoolDir(io.env));
  let socket = args.socket ?? socketPath(io.env);
  const remote = args.daemon;
  // A remote daemon cannot see this machine's disk: the facts are computed here, once, and go with the
  // call (and with its spooled copy), with this machine's clock.
  const facts =
    remote === undefined || payload === undefined || unusable !== undefined
      ? undefined
      : await localFacts(format, payload, io.env, Math.floor(args.timeoutMs * FACTS_SHARE));
  const wire = facts === undefined ? body : envelopeBody(body, facts, start);
  let fallback: Awaited<ReturnType<typeof configFallback>> | undefined;
  // `behind`: a call of this session still waits in the spool, so this one's row may not be admitted
  // before it. A PreToolUse's attempt is judged now or never, so it still asks the daemon.
  const deliver = async (): Promise<Reply | "behind" | undefined> => {
    const own: Transport = remote === undefined ? { socket } : { daemon: remote };
    if ((await drain(spool, socket, own, drainUntil, run, io, agents)) === "unreachable") return undefined;
    if (gate !== "tool" && waitingOf(spool, run, agents).length > 0) return "behind";
    const call = {
      key,
      ...(args.fail === undefined ? {} : { fail: args.fail }),
      ...(facts === undefined ? {} : { facts: true }),
    };
    return post(own, format.name, args.harness, { observer, ledger }, wire, deadline, call).catch(
      (e: unknown) => {
        if (!(e instanceof Unreachable)) throw e;
        lastFailure = e.message;
        return undefined;
      },
    );
  };
  let lastFailure: string | undefined;
  let reply = await deliver();
  if (reply === undefined && args.socket === undefined && remote === undefined) {
    // The config may name another socket: read only now, so the usual call never parses it.
    fallback = await configFallback(args, io.env);
    if (fallback.socket !== undefined && fallback.socket !== socket) {
      socket = fallback.socket;
      reply = await deliver();
    }
  }
  const spoolIt = (cause: string) =>
    spoolCall(spool, { args, payload: payload as Payload, key, at: start, facts }, io, cause);
  if (reply === "behind") {
    spoolIt("an earlier call of its session waits in the spool");
    return 0;
  }
  if (reply !== undefined && answered(reply)) {
    if (reply.note !== undefined || reply.status !== 200)
      io.err(`harness hook: ${reply.note ?? `the daemon answered HTTP ${reply.status}`}`);
    if (reply.status !== 200) return 1;
    // A PreToolUse's attempt is judged now or never: its fail mode answered it.
    if (reply.row === "dropped" && payload !== undefined && gate !== "tool")
      spoolIt("the daemon's queue was full");
    if (reply.body !== "") io.out(reply.body);
    return 0;
  }
  fallback ??= await configFallback(args, io.env);
  if (fallback.problem !== undefined) io.err(`harness hook: ${fallback.problem}`);
  const why =
    reply === undefined
      ? `cannot be reached at ${remote === undefined ? socket : `${remote.url}${lastFailure === undefined ? "" : ` (${lastFailure})`}`}`
      : `answered HTTP ${reply.status}${reply.note === undefined ? "" : ` (${reply.note})`}`;
  if (unusable !== undefined) {
    io.err(`harness hook: the payload ${unusable}, and the daemon ${why}; not recorded, the tool runs`);
    return 1;
  }
  const policy = failPolicy(args.fail, fallback.onUnreachable);
  if (gate !== "tool") spoolIt(`the daemon ${why}`);
  else
    io.err(
      `harness hook: the daemon ${why}; PreToolUse ${policy.mode === "deny" ? "denied" : "allowed"} by ${policy.source}`,
    );
  const answer = unreachableAnswer(format, gate, policy);
  if (answer !== "") io.out(answer);
  return 0;
}

/** A call to spool: its payload, its idempotency key and when the hook received it. */
interface SpooledCall {
  readonly args: HookArgs;
  readonly payload: Payload;
  readonly key: string;
  readonly at: number;
  readonly facts: SuppliedFacts | undefined;
}

function spoolCall(spool: Spool, call: SpooledCall, io: HookIo, cause: string): void {
  const { args } = call;
  const entry: SpoolEntry = {
    v: 1,
    adapter: args.format.name,
    harness: args.harness,
    observer_token_file: args.observerTokenFile,
    ledger_token_file: args.ledgerTokenFile,
    at: call.at,
    key: call.key,
    payload: rowPayload(call.payload, args.format.ids),
    ...(args.daemon === undefined
      ? {}
      : {
          daemon: {
            url: args.daemon.url,
            ...(args.daemon.caFile === undefined ? {} : { ca_file: args.daemon.caFile }),
            ...(args.daemon.clientCert === undefined ? {} : { client_cert: args.daemon.clientCert }),
            ...(args.daemon.clientKey === undefined ? {} : { client_key: args.daemon.clientKey }),
          },
        }),
    ...(call.facts === undefined ? {} : { facts: call.facts }),
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
  io.err(
    spooled
      ? `harness hook: ${cause}; the call waits in ${spool.dir} for the next call that reaches it`
      : `harness hook: ${cause}, and the spool ${spool.dir} is full; the call is dropped and counted in its overflow file`,
  );
}
