/**
 * The TUI's data layer (issue 20): the feed is a bounded ring in journal order without duplicates, the
 * view is told of a burst a few times rather than once per event, and a daemon that is down shows as
 * retrying with backoff, then the feed is read back from the store with ListFires after_seq.
 */
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { FireInfoSchema } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { ConsoleData } from "../../../src/shell/tui/console-data.js";
import { FeedRing, fireKey } from "../../../src/shell/tui/feed-ring.js";
import { RecordedReads } from "./recorded.js";

const fire = (seq: number, n = 0) =>
  create(FireInfoSchema, { fireId: `f-${seq}-${n}`, seq: BigInt(seq), rule: "r", mode: "active" });
const ids = (r: FeedRing) => r.newestFirst().map((e) => (e.kind === "fire" ? e.fire.fireId : e.kind));

describe("the feed ring", () => {
  it("keeps the newest entries up to its capacity, newest first", () => {
    const r = new FeedRing(5);
    for (let seq = 1; seq <= 12; seq++) r.add({ kind: "fire", key: fireKey(fire(seq)), fire: fire(seq) });
    expect(r.size).toBe(5);
    expect(ids(r)).toEqual(["f-12-0", "f-11-0", "f-10-0", "f-9-0", "f-8-0"]);
    expect(r.has("f-7-0")).toBe(false);
  });

  it("adds a fire once, and puts one read late (after a gap) in its journal place", () => {
    const r = new FeedRing(10);
    for (const f of [fire(1), fire(4), fire(4, 1)]) r.add({ kind: "fire", key: fireKey(f), fire: f });
    expect(r.add({ kind: "fire", key: fireKey(fire(4)), fire: fire(4) })).toBe(false);
    r.add({ kind: "fire", key: fireKey(fire(2)), fire: fire(2) });
    expect(ids(r)).toEqual(["f-4-1", "f-4-0", "f-2-0", "f-1-0"]);
  });
});

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

describe("the console's data", () => {
  it("tells the view of a burst of 1,000 fires a few times, not once per fire, and keeps the ring bounded", async () => {
    const recorded = new RecordedReads();
    const data = new ConsoleData({
      reads: recorded.reads,
      clearing: { readOnly: "x" },
      throttleMs: 100,
      feedSize: 300,
    });
    stops.push(() => data.stop());
    data.start();
    const start = Date.now();
    while (data.snapshot().connection.state !== "connected" && Date.now() - start < 5_000)
      await new Promise((r) => setTimeout(r, 10));
    let notified = 0;
    data.subscribe(() => notified++);
    const t0 = Date.now();
    for (let i = 0; i < 1_000; i++) recorded.emit({ event: { case: "ruleFired", value: fire(10_000 + i) } });
    while (
      data.snapshot().feed[0]?.kind !== "fire" ||
      (data.snapshot().feed[0] as { fire: { seq: bigint } }).fire.seq !== 10_999n
    )
      await new Promise((r) => setTimeout(r, 10));
    const took = Date.now() - t0;
    expect(data.snapshot().feed).toHaveLength(300);
    // One notification per 100 ms at most, however the events came.
    expect(notified).toBeLessThanOrEqual(Math.ceil(took / 100) + 1);
  });

  it("retries with backoff while the daemon is down, then reads back every fire after the newest it held", async () => {
    const recorded = new RecordedReads();
    const data = new ConsoleData({
      reads: recorded.reads,
      clearing: { readOnly: "x" },
      throttleMs: 0,
      backoffMs: 20,
      maxBackoffMs: 80,
    });
    stops.push(() => data.stop());
    data.start();
    const wait = async (test: () => boolean) => {
      const start = Date.now();
      while (!test()) {
        if (Date.now() - start > 5_000) throw new Error("timed out");
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await wait(() => data.snapshot().connection.state === "connected");
    const newest = data.snapshot().feed.find((e) => e.kind === "fire");
    if (newest?.kind !== "fire") throw new Error("no fire");
    // The daemon goes away: the stream ends; three connections fail; fires commit meanwhile.
    recorded.failures = 3;
    recorded.missed = [fire(Number(newest.fire.seq) + 1), fire(Number(newest.fire.seq) + 2)];
    const attempts: number[] = [];
    data.subscribe(() => {
      const c = data.snapshot().connection;
      if (c.state === "retrying" && attempts.at(-1) !== c.attempt) attempts.push(c.attempt);
    });
    recorded.end();
    await wait(() => data.snapshot().connection.state === "connected" && attempts.length >= 4);
    expect(attempts).toEqual([1, 2, 3, 4]);
    await wait(() => data.snapshot().recovered === 2);
    expect(
      data
        .snapshot()
        .feed.slice(0, 2)
        .map((e) => (e.kind === "fire" ? e.fire.fireId : e.kind)),
    ).toEqual(recorded.missed.map((f) => f.fireId).reverse());
  });
});

describe("which daemon the console watches (decision 0018)", () => {
  it("the status line names the daemon's URL or socket, printable", async () => {
    const { statusText } = await import("../../../src/shell/tui/components/status-line.js");
    const recorded = new RecordedReads();
    const data = new ConsoleData({
      reads: recorded.reads,
      clearing: { readOnly: "x" },
      daemon: "https://rules.example:7443",
    });
    expect(statusText(data.snapshot())).toMatch(
      /^READ-ONLY \| connecting \| daemon https:\/\/rules\.example:7443$/,
    );
    const hostile = new ConsoleData({
      reads: recorded.reads,
      clearing: { readOnly: "x" },
      daemon: "/run/\u001b[2Jh.sock",
    });
    expect(statusText(hostile.snapshot())).toContain("daemon /run/?[2Jh.sock");
    const unnamed = new ConsoleData({ reads: recorded.reads, clearing: { readOnly: "x" } });
    expect(statusText(unnamed.snapshot())).not.toContain("daemon");
  });
});
