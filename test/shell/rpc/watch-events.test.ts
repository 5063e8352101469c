/**
 * RuleService.WatchEvents (SPEC-0029 REQ-17) in a real daemon process over its real socket and TCP
 * listener: events as they commit, in commit order, in ListFires' and ListHolds' shapes; a slow client's
 * gap; a disconnect that frees its subscription; the read tier over TCP; the daemon's close.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { create, fromBinary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fire } from "../../../src/core/outcome.js";
import { watchJson, watchLine } from "../../../src/shell/cli/commands/rules-watch.js";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import type { Committed } from "../../../src/shell/daemon/evaluator.js";
import { journalClient, type RuleClient, ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import {
  type WatchEventsResponse,
  WatchEventsResponseSchema,
} from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import type { CommittedRecords } from "../../../src/shell/rpc/messages.js";
import {
  commitPublisher,
  committedEvents,
  eventCount,
  type WatchEvent,
} from "../../../src/shell/rpc/watch-events.js";
import { createLog } from "../../../src/shell/support/log.js";
import { fires } from "../../support/store-reads.js";
import { CLI, TestFleet } from "../daemon-harness.js";

/** Annotates each run opened with the trigger `flood`, with a message of four copies of its repo. */
const FLOOD = `name = "flood"
description = "Fires on every flood run, with a long message."
on = "run_event"
when = 'event.type == "opened" && event.trigger == "flood"'
level = "annotate"
target = "run"
message = "{{repo}} {{repo}} {{repo}} {{repo}}"
`;

const budget = (harness: string, n: number) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#${n}`,
  outcome: "budget_exceeded",
});

/** A port free a moment ago, for the TCP listener (the daemon's startup line does not name it). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A watch stream read one message at a time; `close()` cancels the call. */
function watch(client: RuleClient) {
  const ac = new AbortController();
  const it = client.watchEvents({}, { signal: ac.signal })[Symbol.asyncIterator]();
  return {
    async next(): Promise<WatchEventsResponse> {
      const r = await it.next();
      if (r.done === true) throw new Error("the watch stream ended");
      return r.value;
    },
    /** Resolves when the stream has ended (true) or fails (false). */
    async ended(): Promise<boolean> {
      return it.next().then(
        (r) => r.done === true,
        () => false,
      );
    },
    close: () => ac.abort(),
  };
}

/** The daemon's log lines (JSON on stdout) with this message. */
const logged = (f: TestFleet, msg: string): Record<string, unknown>[] =>
  f.daemonStdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);

const lastWatchers = (f: TestFleet): unknown => logged(f, "event watcher left").at(-1)?.watchers;

describe("a commit's events", () => {
  const fire = (id: string, actions: Fire["actions"] = []) => ({ id, actions }) as unknown as Fire;
  const committed: Committed = {
    fires: [fire("f-7-0"), fire("f-7-1", [{ kind: "hold", harness: "impl" }])],
    releases: [{ harness: "nightly", rule: "a", cause: "condition_cleared", fireId: "f-3-0" }],
    evaluations: [],
  };
  const records = (missing: string | undefined): CommittedRecords => ({
    fire: async (id) => (id === missing ? undefined : { fireId: id }),
    hold: async (id) => (id === missing ? undefined : { hold: { fireId: id } }),
  });

  it("are each fire followed by the hold it placed, then the releases", async () => {
    const events = await committedEvents(committed, records(undefined));
    expect(events.map(named)).toEqual([
      ["ruleFired", "f-7-0"],
      ["ruleFired", "f-7-1"],
      ["ruleHold", "f-7-1"],
      ["ruleHoldReleased", "f-3-0"],
    ]);
    expect(eventCount(committed)).toBe(events.length);
  });

  it("fail, naming the record, when the store lacks one the commit made", async () => {
    await expect(committedEvents(committed, records("f-3-0"))).rejects.toThrow(
      "the release of nightly's hold by rule a was committed but is not in the store",
    );
  });

  it("reach watchers in commit order, whichever commit's reads answer first, a failed read a gap in its place", async () => {
    const seen: [string | undefined, string | number | undefined][] = [];
    const bus = {
      watchers: 1,
      publish: (events: readonly WatchEvent[]) => seen.push(...events.map(named)),
      miss: (n: number) => seen.push(["gap", n]),
    };
    // Each fire's record answers when the test lets it: the later commits' first.
    const answers = new Map<string, (found: boolean) => void>();
    const held: CommittedRecords = {
      fire: (id) =>
        new Promise((resolve) => answers.set(id, (found) => resolve(found ? { fireId: id } : undefined))),
      hold: async (id) => ({ hold: { fireId: id } }),
    };
    const publish = commitPublisher(bus, held, createLog({ level: "silent" }));
    const commit = (id: string): Committed => ({ fires: [fire(id)], releases: [], evaluations: [] });
    for (const id of ["f-1-0", "f-2-0", "f-3-0"]) publish(commit(id));
    answers.get("f-3-0")?.(true);
    answers.get("f-2-0")?.(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    answers.get("f-1-0")?.(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([
      ["ruleFired", "f-1-0"],
      ["gap", 1],
      ["ruleFired", "f-3-0"],
    ]);
  });
});

const named = (e: WatchEvent): [string | undefined, string | undefined] => {
  const ev = e.event;
  if (ev?.case === "ruleFired") return [ev.case, ev.value.fireId];
  if (ev?.case === "ruleHold" || ev?.case === "ruleHoldReleased") return [ev.case, ev.value.hold?.fireId];
  return [ev?.case, undefined];
};

describe("rules watch's gap", () => {
  it("is one line, and one JSON object, with the count missed", () => {
    const gap = create(WatchEventsResponseSchema, { event: { case: "gap", value: { missed: 412n } } });
    expect(watchLine(gap)).toBe(
      "gap: missed 412 events (this watcher read too slowly); see harness rules list and harness rules holds --released",
    );
    expect(watchJson(gap)).toEqual({ event: "gap", missed: 412 });
  });
});

describe("WatchEvents", () => {
  const f = new TestFleet({
    rules: [{ name: "flood", text: FLOOD }],
    enforce: ["budget-exhaustion-recurring"],
  });
  const configFile = path.join(f.root, "config", "harness", "harness.toml");
  const readToken = `read-${"r".repeat(40)}`;
  let tcp: string;
  let control: string;
  let ledger: ReturnType<typeof journalClient>;

  beforeAll(async () => {
    const port = await freePort();
    tcp = `http://127.0.0.1:${port}`;
    const readFile = path.join(f.root, "read.token");
    fs.writeFileSync(readFile, `${readToken}\n`, { mode: 0o600 });
    const text = fs.readFileSync(configFile, "utf8");
    fs.writeFileSync(
      configFile,
      text.replace(
        "[server]\n",
        `[server]\nlisten = "127.0.0.1:${port}"\nread_token_file = ${JSON.stringify(readFile)}\n`,
      ),
    );
    await f.start();
    control = await readTokenFile(controlTokenPath(f.env));
    ledger = journalClient(
      { socketPath: f.socketPath },
      await readTokenFile(f.tokens.get("ledger") as string),
    );
  });
  afterAll(() => f.dispose());

  it("harness rules watch prints each event as it commits, as a line or as JSON, and stops on Ctrl-C", async () => {
    const text = watchCli(f, []);
    const json = watchCli(f, ["--json"]);
    await text.watching;
    await json.watching;
    await ledger.append({ events: [budget("cli", 1), budget("cli", 2)].map(wire) });
    await f.until(() => json.lines().length === 2, "the fire and the hold");
    const r = await f.cli(["rules", "clear", "cli"]);
    expect(r.code, r.stderr).toBe(0);
    await f.until(() => json.lines().length === 3 && text.lines().length === 3, "the release");
    const [fired, held, released] = json.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(fired).toMatchObject({
      event: "rule_fired",
      rule: "budget-exhaustion-recurring",
      target: { kind: "harness", key: "cli" },
      effective_level: "hold",
      action: "hold",
    });
    expect(held).toMatchObject({
      event: "rule_hold",
      harness: "cli",
      fire_id: fired?.fire_id,
      released_at: null,
      cooldown: "6h",
    });
    expect(released).toMatchObject({
      event: "rule_hold_released",
      harness: "cli",
      fire_id: fired?.fire_id,
      release_cause: "operator",
    });
    const id = fired?.fire_id as string;
    const [firedLine, heldLine, releasedLine] = text.lines();
    expect(firedLine).toMatch(
      new RegExp(`^\\S+Z  fired     ${id}  budget-exhaustion-recurring  harness cli  hold, active: `),
    );
    expect(heldLine).toMatch(
      new RegExp(`^\\S+Z  held      ${id}  budget-exhaustion-recurring  harness cli$`),
    );
    expect(releasedLine).toMatch(
      new RegExp(`^\\S+Z  released  ${id}  budget-exhaustion-recurring  harness cli  by operator$`),
    );
    expect(await text.interrupt()).toBe(0);
    expect(await json.interrupt()).toBe(0);
  });

  it("sends fires, holds and releases as they commit, in commit order and in the list shapes, on the socket and to a read-tier TCP client", async () => {
    const onSocket = watch(ruleClient({ socketPath: f.socketPath }));
    const overTcp = watch(ruleClient({ baseUrl: tcp }, readToken));
    // The first message says the subscription is in place: nothing committed after it is missed.
    expect((await onSocket.next()).event.case).toBeUndefined();
    expect((await overTcp.next()).event.case).toBeUndefined();
    const operator = ruleClient({ socketPath: f.socketPath }, control);

    await ledger.append({ events: [budget("nightly", 1), budget("nightly", 2)].map(wire) });
    const firstFire = await onSocket.next();
    const firstHold = await onSocket.next();
    await operator.clearHold({ harness: "nightly" });
    const operatorRelease = await onSocket.next();

    await ledger.append({ events: [budget("impl", 1), budget("impl", 2)].map(wire) });
    const secondFire = await onSocket.next();
    const secondHold = await onSocket.next();
    // A reload that takes the rule out of enforce releases its hold (REQ-11 (c)).
    fs.writeFileSync(
      configFile,
      fs.readFileSync(configFile, "utf8").replace(/^enforce = .*$/m, "enforce = []"),
    );
    expect((await operator.reload({})).released).toBe(1);
    const reloadRelease = await onSocket.next();

    const seen = [firstFire, firstHold, operatorRelease, secondFire, secondHold, reloadRelease];
    expect(seen.map((m) => m.event.case)).toEqual([
      "ruleFired",
      "ruleHold",
      "ruleHoldReleased",
      "ruleFired",
      "ruleHold",
      "ruleHoldReleased",
    ]);
    const overTcpSeen = [];
    for (let i = 0; i < seen.length; i++) overTcpSeen.push(await overTcp.next());
    expect(overTcpSeen).toEqual(seen);

    // The same records ListFires and ListHolds return (the actions have moved on since: compare those
    // by name).
    const reader = ruleClient({ socketPath: f.socketPath });
    const { fires } = await reader.listFires({});
    const { holds } = await reader.listHolds({ includeReleased: true });
    const fired = [firstFire, secondFire].map((m) => m.event.value);
    expect(fired.map((x) => x?.$typeName)).toEqual(["harness.v1.FireInfo", "harness.v1.FireInfo"]);
    // Oldest first, without the fire of the previous test's harness.
    const listed = [...fires].reverse().filter((x) => x.harness !== "cli");
    expect(listed.map((x) => x.fireId)).toEqual(fired.map((x) => (x as { fireId: string }).fireId));
    for (const [i, m] of [firstFire, secondFire].entries()) {
      if (m.event.case !== "ruleFired") throw new Error("not a fire");
      const { actions, ...rest } = m.event.value;
      const { actions: listedActions, ...listedRest } = listed[i] as (typeof fires)[number];
      expect(rest).toEqual(listedRest);
      expect(actions.map((a) => a.action)).toEqual(listedActions.map((a) => a.action));
    }
    const byFire = new Map(holds.map((h) => [h.hold?.fireId, h]));
    for (const [placed, released, cause] of [
      [firstHold, operatorRelease, "operator"],
      [secondHold, reloadRelease, "reload"],
    ] as const) {
      if (placed.event.case !== "ruleHold" || released.event.case !== "ruleHoldReleased")
        throw new Error("not a hold");
      const hold = placed.event.value;
      expect(hold.hold?.rule).toBe("budget-exhaustion-recurring");
      expect(hold.releasedAtMs).toBe(0n);
      expect(released.event.value).toEqual(byFire.get(hold.hold?.fireId));
      expect(released.event.value).toMatchObject({ hold: hold.hold, releaseCause: cause });
      expect(released.event.value.releasedAtMs).toBeGreaterThan(0n);
    }
    onSocket.close();
    overTcp.close();
    await f.until(() => lastWatchers(f) === 0, "both watchers to leave");
  });

  it("gives a slow client one gap with the exact count it missed, then resumes; its disconnect frees the subscription", async () => {
    const stream = rawWatch(f.socketPath);
    expect((await stream.read()).event.case).toBeUndefined();
    stream.pause();
    // Fires of about 4 KiB each, a batch at a time, until the daemon says this watcher misses events:
    // its 1,024-event buffer is full, beyond what the socket's buffers took in.
    const repo = `/srv/${"flood-repo/".repeat(90)}`;
    const floodFires = () => fires(f, { rule: "flood" }).length;
    const missing = () =>
      logged(f, "event watcher reads slower than events commit; it misses them until it catches up").length;
    const warned = missing();
    let total = 0;
    while (missing() === warned) {
      expect(total, "the watcher's buffer never overflowed").toBeLessThan(20_000);
      const { results } = await ledger.append({
        events: Array.from({ length: 250 }, (_, i) =>
          wire({
            kind: "run_event",
            type: "opened",
            harness: "flood",
            run: `flood#${total + i}`,
            trigger: "flood",
            repo,
          }),
        ),
      });
      expect(results.every((r) => r.result.case === "admitted")).toBe(true);
      total += 250;
      await f.until(() => floodFires() === total, "the batch's fires", 60_000);
    }
    stream.resume();
    const got: WatchEventsResponse[] = [];
    while (got.findIndex((m) => m.event.case === "gap") === -1) got.push(await stream.read());
    // Once the gap is read the stream resumes: the next commit arrives right after it.
    await ledger.append({
      events: [
        wire({
          kind: "run_event",
          type: "opened",
          harness: "flood",
          run: "flood#after",
          trigger: "flood",
          repo,
        }),
      ],
    });
    got.push(await stream.read());

    const gapAt = got.findIndex((m) => m.event.case === "gap");
    const gap = got[gapAt]?.event;
    if (gap?.case !== "gap") throw new Error("no gap");
    const stored = fires(f, { rule: "flood" }).map((r) => r.fire_id);
    expect(stored).toHaveLength(total + 1);
    const ids = (ms: WatchEventsResponse[]) =>
      ms.map((m) => (m.event.case === "ruleFired" ? m.event.value.fireId : m.event.case));
    const head = ids(got.slice(0, gapAt));
    // The buffer filled before anything was missed, and the gap counts exactly what is missing.
    expect(head.length).toBeGreaterThanOrEqual(1_024);
    expect(head).toEqual(stored.slice(0, head.length));
    expect(Number(gap.value.missed)).toBe(total - head.length);
    expect(ids(got.slice(gapAt + 1))).toEqual([stored[total]]);

    const left = logged(f, "event watcher left").length;
    stream.destroy();
    await f.until(() => logged(f, "event watcher left").length > left, "the watcher to leave");
    expect(lastWatchers(f)).toBe(0);
    expect(logged(f, "event watcher left").at(-1)?.reason).toBe("cancelled");
  });

  it("ends open streams cleanly when the daemon stops", async () => {
    const w = watch(ruleClient({ socketPath: f.socketPath }));
    expect((await w.next()).event.case).toBeUndefined();
    const cli = watchCli(f, []);
    await cli.watching;
    const ended = w.ended();
    await f.stop();
    expect(await ended).toBe(true);
    expect(await cli.exit).toBe(0);
    expect(cli.stderr()).toContain("harness rules watch: the daemon ended the stream (it is stopping)");
    const none = await f.cli(["rules", "watch"]);
    expect(none.code).toBe(3);
    expect(none.stderr).toBe(`harness rules watch: no daemon answers on ${f.socketPath}\n`);
  });
});

/** `harness rules watch` running in the background: its lines so far, and how it ends. */
function watchCli(f: TestFleet, args: readonly string[]) {
  const child = spawn(process.execPath, [CLI, "rules", "watch", ...args], {
    env: f.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const watching = new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes("watching")) resolve();
    });
    void exit.then(() => reject(new Error(`rules watch exited: ${stderr}`)));
  });
  return {
    watching,
    exit,
    lines: () => stdout.split("\n").filter((l) => l !== ""),
    stderr: () => stderr,
    interrupt: () => {
      child.kill("SIGINT");
      return exit;
    },
  };
}

/** An event as `JournalService.Append` takes it: its kind beside its fields, stamped now. */
const wire = (e: Record<string, JsonValue>): { kind: string; event: JsonObject } => {
  const { kind, ...event } = e;
  return { kind: String(kind), event: { at: new Date().toISOString(), ...event } };
};

/**
 * WatchEvents over a raw HTTP/1.1 request, so the test decides when the client reads: a paused response
 * stops reading the socket, which fills, which stops the daemon's writes.
 */
function rawWatch(socketPath: string) {
  let buffered = Buffer.alloc(0);
  const messages: WatchEventsResponse[] = [];
  let waiting: (() => void) | undefined;
  let failed: Error | undefined;
  const req = http.request({
    socketPath,
    method: "POST",
    path: "/harness.v1.RuleService/WatchEvents",
    headers: { "content-type": "application/connect+proto", "connect-protocol-version": "1" },
  });
  let res: http.IncomingMessage | undefined;
  req.on("response", (r) => {
    res = r;
    r.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 5) {
        const len = buffered.readUInt32BE(1);
        if (buffered.length < 5 + len) break;
        const flags = buffered[0] as number;
        const body = buffered.subarray(5, 5 + len);
        buffered = buffered.subarray(5 + len);
        if ((flags & 0b10) !== 0) failed = new Error(`stream ended: ${body.toString()}`);
        else messages.push(fromBinary(WatchEventsResponseSchema, body));
      }
      waiting?.();
    });
  });
  req.on("error", (e) => {
    failed = e;
    waiting?.();
  });
  // An empty request message: one envelope of zero bytes.
  req.end(Buffer.from([0, 0, 0, 0, 0]));
  return {
    async read(): Promise<WatchEventsResponse> {
      for (;;) {
        const m = messages.shift();
        if (m !== undefined) return m;
        if (failed !== undefined) throw failed;
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
      }
    },
    pause: () => res?.pause(),
    resume: () => res?.resume(),
    destroy: () => req.destroy(),
  };
}
