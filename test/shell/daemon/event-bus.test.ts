/** The watchers' bus: bounded per watcher, a gap with the exact count in place of what overflowed. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Delivery, EventBus } from "../../../src/shell/daemon/event-bus.js";
import { runs } from "../../property-runs.js";

/** Reads every delivery ready now. */
async function drain<T>(sub: { ready: number; next(): Promise<Delivery<T> | undefined> }) {
  const out: Delivery<T>[] = [];
  while (sub.ready > 0) out.push((await sub.next()) as Delivery<T>);
  return out;
}

describe("the event bus", () => {
  it("delivers in order, then a gap with the count missed once the buffer is read, then resumes", async () => {
    const bus = new EventBus<number>();
    let misses = 0;
    const sub = bus.subscribe({ capacity: 3, onMiss: () => misses++ });
    bus.publish([1, 2, 3, 4, 5]);
    expect(await sub.next()).toEqual({ kind: "event", event: 1 });
    // Room for one more, but 4 and 5 were missed: 6 is missed too, so the gap stands where they were.
    bus.publish([6]);
    expect(await drain(sub)).toEqual([
      { kind: "event", event: 2 },
      { kind: "event", event: 3 },
      { kind: "gap", missed: 3 },
    ]);
    bus.publish([7]);
    expect(await drain(sub)).toEqual([{ kind: "event", event: 7 }]);
    // Told once when it started to miss; a second overflow after the gap tells it again.
    expect(misses).toBe(1);
    bus.publish([8, 9, 10, 11]);
    expect(misses).toBe(2);
  });

  it("wakes a waiting reader, and ends it when its signal aborts, freeing the subscription", async () => {
    const bus = new EventBus<string>();
    const ac = new AbortController();
    const ends: string[] = [];
    const sub = bus.subscribe({ signal: ac.signal, onEnd: (r) => ends.push(r) });
    const waiting = sub.next();
    bus.publish(["a"]);
    expect(await waiting).toEqual({ kind: "event", event: "a" });
    const pending = sub.next();
    ac.abort();
    expect(await pending).toBeUndefined();
    expect(bus.watchers).toBe(0);
    expect(ends).toEqual(["cancelled"]);
    bus.publish(["b"]);
    expect(sub.ready).toBe(0);
  });

  it("ends every subscription when closed, and any later one at once", async () => {
    const bus = new EventBus<number>();
    const ends: string[] = [];
    const a = bus.subscribe({ onEnd: (r) => ends.push(r) });
    const seen: Delivery<number>[] = [];
    const reading = (async () => {
      for await (const d of a) seen.push(d);
    })();
    bus.publish([1]);
    bus.close();
    await reading;
    expect(seen).toEqual([{ kind: "event", event: 1 }]);
    const late = bus.subscribe({ onEnd: (r) => ends.push(r) });
    expect(await late.next()).toBeUndefined();
    expect(ends).toEqual(["closed", "closed"]);
    expect(bus.watchers).toBe(0);
  });

  it("a watcher that stops iterating unsubscribes", async () => {
    const bus = new EventBus<number>();
    const sub = bus.subscribe();
    bus.publish([1, 2]);
    for await (const d of sub) {
      expect(d).toEqual({ kind: "event", event: 1 });
      break;
    }
    expect(bus.watchers).toBe(0);
  });

  it("counts events that could not be published as missed: a waiting reader gets the gap at once", async () => {
    const bus = new EventBus<number>();
    const waiting = bus.subscribe();
    const busy = bus.subscribe();
    bus.publish([1]);
    const next = waiting.next();
    expect(await next).toEqual({ kind: "event", event: 1 });
    const gap = waiting.next();
    bus.miss(3);
    expect(await gap).toEqual({ kind: "gap", missed: 3 });
    bus.miss(2);
    bus.publish([2]);
    // The reader that was not waiting has not read its gap yet, so what follows joins it.
    expect(await drain(busy)).toEqual([
      { kind: "event", event: 1 },
      { kind: "gap", missed: 6 },
    ]);
  });

  it("refuses a buffer that holds nothing", () => {
    expect(() => new EventBus<number>().subscribe({ capacity: 0 })).toThrow(RangeError);
  });

  it("whatever the interleaving, what a watcher reads is what was published, gaps counting exactly what is missing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.oneof(fc.record({ publish: fc.nat(12) }), fc.record({ read: fc.nat(12) })), {
          maxLength: 40,
        }),
        async (capacity, steps) => {
          const bus = new EventBus<number>();
          const sub = bus.subscribe({ capacity });
          let published = 0;
          const read: Delivery<number>[] = [];
          for (const step of steps) {
            if ("publish" in step) {
              bus.publish(Array.from({ length: step.publish }, (_, i) => published + i));
              published += step.publish;
            } else
              for (let i = 0; i < step.read && sub.ready > 0; i++)
                read.push((await sub.next()) as Delivery<number>);
            expect(sub.ready).toBeLessThanOrEqual(capacity + 1);
          }
          read.push(...(await drain(sub)));
          // Replaying events and gaps covers 0..published-1 exactly once, in order, with no two gaps together.
          let expected = 0;
          let previous: Delivery<number> | undefined;
          for (const d of read) {
            if (d.kind === "event") {
              expect(d.event).toBe(expected);
              expected++;
            } else {
              expect(d.missed).toBeGreaterThan(0);
              expect(previous?.kind).not.toBe("gap");
              expected += d.missed;
            }
            previous = d;
          }
          expect(expected).toBe(published);
        },
      ),
      { numRuns: runs(200) },
    );
  });
});
