/**
 * The authorization matrix (SPEC-0029 REQ-17, issue 6): every method of the generated service
 * descriptors, called by every kind of caller, against a real daemon over its real socket and TCP
 * listener. The expected cell comes from the method's tier in METHOD_TIERS and the spec's grants, written
 * out here on their own: a socket caller without a token reads; the control token reads and controls on
 * either listener; the read token reads over TCP; a producer credential appends and does nothing else;
 * no token over TCP, and a token nobody configured, get nothing. Every denied cell must get
 * PERMISSION_DENIED without running its handler; every granted cell must reach its handler.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { AgentStatusService } from "../../../src/shell/rpc/gen/harness/v1/agent_status_pb.js";
import { AgentService } from "../../../src/shell/rpc/gen/harness/v1/agents_pb.js";
import { JournalService } from "../../../src/shell/rpc/gen/harness/v1/journal_pb.js";
import { JournalQueryService } from "../../../src/shell/rpc/gen/harness/v1/journal_query_pb.js";
import { RuleService } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { TokenService } from "../../../src/shell/rpc/gen/harness/v1/tokens_pb.js";
import { METHOD_TIERS, type Tier } from "../../../src/shell/rpc/tiers.js";
import { holds, journalCount } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const SERVICES: readonly DescService[] = [
  JournalService,
  RuleService,
  TokenService,
  AgentService,
  AgentStatusService,
  JournalQueryService,
];

interface CallerCell {
  readonly name: string;
  readonly listener: "socket" | "tcp";
  /** The Authorization header's token; none sent when undefined. */
  readonly token: (t: Tokens) => string | undefined;
  /** The tiers the spec grants this caller. */
  readonly grants: readonly Tier[];
}

interface Tokens {
  readonly control: string;
  readonly read: string;
  readonly producer: string;
}

const BAD = `bad-${"b".repeat(40)}`;

const CALLERS: readonly CallerCell[] = [
  { name: "socket, no token", listener: "socket", token: () => undefined, grants: ["read"] },
  { name: "socket, control token", listener: "socket", token: (t) => t.control, grants: ["read", "control"] },
  { name: "socket, producer credential", listener: "socket", token: (t) => t.producer, grants: ["producer"] },
  { name: "socket, bad token", listener: "socket", token: () => BAD, grants: [] },
  { name: "TCP, read token", listener: "tcp", token: (t) => t.read, grants: ["read"] },
  { name: "TCP, control token", listener: "tcp", token: (t) => t.control, grants: ["read", "control"] },
  { name: "TCP, producer credential", listener: "tcp", token: (t) => t.producer, grants: ["producer"] },
  { name: "TCP, no token", listener: "tcp", token: () => undefined, grants: [] },
  { name: "TCP, bad token", listener: "tcp", token: () => BAD, grants: [] },
];

const HELD = "nightly";
const budget = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: HELD,
  run: `${HELD}#${n}`,
  outcome: "budget_exceeded",
  at: "2026-01-05T10:00:00Z",
});

/**
 * Requests that would change something if their handler ran: ClearHold names the held harness, Append
 * carries a real event; the rest ask for nothing in particular.
 */
function requestFor(method: DescMethod): Record<string, unknown> {
  if (method.name === "ClearHold") return { harness: HELD };
  if (method.name === "CheckRun") return { harness: HELD, run: `${HELD}#probe` };
  if (method.name === "Append")
    return {
      events: [
        {
          kind: "run_event",
          event: { type: "opened", at: "2026-01-05T10:00:00Z", harness: "probe", run: "probe#1" },
        },
      ],
    };
  return {};
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const fullName = (s: DescService, m: DescMethod) => `${s.typeName}/${m.name}`;

/** The code a call ends with ("OK" when it succeeds); a streaming call reads its first message. */
async function outcome(
  service: DescService,
  method: DescMethod,
  target: { socketPath: string } | { baseUrl: string },
  token: string | undefined,
): Promise<string> {
  const transport = createConnectTransport({
    httpVersion: "1.1",
    ...("socketPath" in target
      ? { baseUrl: "http://localhost", nodeOptions: { socketPath: target.socketPath } }
      : { baseUrl: target.baseUrl }),
    interceptors:
      token === undefined
        ? []
        : [
            (next) => (req) => {
              req.header.set("Authorization", `Bearer ${token}`);
              return next(req);
            },
          ],
  });
  const client = createClient(service, transport) as unknown as Record<
    string,
    (req: unknown, opts: { timeoutMs: number; signal: AbortSignal }) => unknown
  >;
  const ac = new AbortController();
  const call = client[method.localName];
  if (call === undefined) throw new Error(`no client method for ${method.name}`);
  try {
    const req = requestFor(method);
    if (method.methodKind === "unary") await call(req, { timeoutMs: 5_000, signal: ac.signal });
    else if (method.methodKind === "server_streaming") {
      const it = (call(req, { timeoutMs: 5_000, signal: ac.signal }) as AsyncIterable<unknown>)[
        Symbol.asyncIterator
      ]();
      await it.next();
    } else throw new Error(`${method.name}: the matrix does not call ${method.methodKind} methods`);
    return "OK";
  } catch (e) {
    if (e instanceof ConnectError) return Code[e.code];
    throw e;
  } finally {
    ac.abort();
  }
}

const DENIED = new Set(["PermissionDenied", "Unauthenticated"]);

describe("the authorization matrix", () => {
  const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
  const configFile = path.join(f.root, "config", "harness", "harness.toml");
  const readToken = `read-${"r".repeat(40)}`;
  let tcp: string;
  let tokens: Tokens;

  const held = () => holds(f, { harness: HELD, inForce: true }).length === 1;
  const journalRows = () => journalCount(f, { kind: "run_event" });
  const logged = (msg: string) =>
    f.daemonStdout.split("\n").filter((l) => l.includes(`"msg":"${msg}"`)).length;
  const loads = () => logged("rule set loaded");
  const watchers = () => logged("event watcher joined");

  beforeAll(async () => {
    const port = await freePort();
    tcp = `http://127.0.0.1:${port}`;
    const readFile = path.join(f.root, "read.token");
    fs.writeFileSync(readFile, `${readToken}\n`, { mode: 0o600 });
    fs.writeFileSync(
      configFile,
      fs
        .readFileSync(configFile, "utf8")
        .replace(
          "[server]\n",
          `[server]\nlisten = "127.0.0.1:${port}"\nread_token_file = ${JSON.stringify(readFile)}\n`,
        ),
    );
    await f.start();
    tokens = {
      control: await readTokenFile(controlTokenPath(f.env)),
      read: readToken,
      producer: await readTokenFile(f.tokens.get("ledger") as string),
    };
    const r = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([budget(1), budget(2)]),
    );
    expect(r.code, r.stderr).toBe(0);
    await f.until(held, `a hold on ${HELD}`);
  });
  afterAll(() => f.dispose());

  const cells = SERVICES.flatMap((service) =>
    service.methods.flatMap((method) => CALLERS.map((caller) => ({ service, method, caller }))),
  );
  const expected = (c: (typeof cells)[number]): "granted" | "denied" => {
    const tier = METHOD_TIERS.get(fullName(c.service, c.method));
    return tier !== undefined && c.caller.grants.includes(tier) ? "granted" : "denied";
  };
  const run = async (c: (typeof cells)[number]) => {
    const target = c.caller.listener === "socket" ? { socketPath: f.socketPath } : { baseUrl: tcp };
    const code = await outcome(c.service, c.method, target, c.caller.token(tokens));
    // A granted RotateControlToken did rotate it: the cells after it present the new one.
    if (c.method.name === "RotateControlToken" && code === "OK")
      tokens = { ...tokens, control: await readTokenFile(controlTokenPath(f.env)) };
    return `${fullName(c.service, c.method)} by ${c.caller.name}: ${DENIED.has(code) ? "denied" : "granted"} (${code})`;
  };
  const want = (c: (typeof cells)[number], got: string) =>
    `${fullName(c.service, c.method)} by ${c.caller.name}: ${expected(c)}${got.slice(got.lastIndexOf(" "))}`;

  it("covers every method of the descriptors, each with a tier", () => {
    expect(cells.length).toBe(SERVICES.reduce((n, s) => n + s.methods.length, 0) * CALLERS.length);
    for (const s of SERVICES)
      for (const m of s.methods) expect(METHOD_TIERS.has(fullName(s, m)), fullName(s, m)).toBe(true);
  });

  it("denies every cell above the caller's tier with PERMISSION_DENIED, before its handler runs", async () => {
    const rows = journalRows();
    const loaded = loads();
    const watched = watchers();
    const denied = cells.filter((c) => expected(c) === "denied");
    const got: string[] = [];
    for (const c of denied) got.push(await run(c));
    // Every denial is PERMISSION_DENIED (the interceptor's one code, for a missing or bad token too).
    expect(got).toEqual(
      denied.map((c) => `${fullName(c.service, c.method)} by ${c.caller.name}: denied (PermissionDenied)`),
    );
    // No denied handler ran: the hold is in place, nothing was journaled, nothing reloaded, and no
    // watcher subscribed.
    expect(held()).toBe(true);
    expect(watchers()).toBe(watched);
    expect(journalRows()).toBe(rows);
    expect(loads()).toBe(loaded);
    expect(f.daemonStdout).not.toContain("policy repo synced");
  });

  it("A read client cannot clear a hold", async () => {
    const e = await ruleClient({ baseUrl: tcp }, tokens.read)
      .clearHold({ harness: HELD }, { timeoutMs: 5_000 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectError);
    expect((e as ConnectError).code).toBe(Code.PermissionDenied);
    expect((e as ConnectError).rawMessage).toBe(
      "harness.v1.RuleService/ClearHold needs the control tier, which a reader does not hold",
    );
    // Refused before the handler ran: the hold is still in force.
    expect(held()).toBe(true);
    expect(f.daemonStdout).not.toContain('"msg":"rule hold released"');
  });

  it("runs the handler of every cell the caller's tier covers: zero unexpected grants, zero unexpected denials", async () => {
    const granted = cells.filter((c) => expected(c) === "granted");
    const loaded = loads();
    const watched = watchers();
    const rows = journalRows() ?? 0;
    const got: string[] = [];
    for (const c of granted) got.push(await run(c));
    expect(got).toEqual(granted.map((c, i) => want(c, got[i] as string)));
    // And the handlers did run: the first controller's ClearHold released the hold, each Reload
    // reloaded, each WatchEvents subscribed, each producer's Append journaled its event.
    expect(held()).toBe(false);
    const reloads = granted.filter((c) => c.method.name === "Reload").length;
    expect(reloads).toBe(2);
    await f.until(() => loads() === loaded + reloads, "the reloads' log lines");
    const rotations = granted.filter((c) => c.method.name === "RotateControlToken").length;
    expect(rotations).toBe(2);
    expect(f.daemonStdout.split('"msg":"control token rotated"').length - 1).toBe(rotations);
    const watches = granted.filter((c) => c.method.name === "WatchEvents").length;
    expect(watches).toBe(4);
    expect(watchers()).toBe(watched + watches);
    const appends = granted.filter((c) => c.method.name === "Append").length;
    expect(appends).toBe(2);
    await f.until(() => journalRows() === rows + appends, "the appended rows");
  });
});
