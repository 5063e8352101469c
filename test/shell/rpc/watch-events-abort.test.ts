/**
 * A WatchEvents caller that stopped reading and then went away: the transport's write never drains, so
 * the handler stays suspended at its yield and its `finally` never runs. What the stream holds (its
 * subscription, its credential listener, its expiry timer) is let go when the call is aborted.
 */
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventBus } from "../../../src/shell/daemon/event-bus.js";
import { CredentialHolder, type Credentials, digestToken } from "../../../src/shell/rpc/credentials.js";
import { CREDENTIAL } from "../../../src/shell/rpc/tiers.js";
import { type WatchEvent, watchEvents } from "../../../src/shell/rpc/watch-events.js";
import { createLog } from "../../../src/shell/support/log.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("WatchEvents aborted while suspended at a yield", () => {
  it("lets go of its subscription, its credential listener and its expiry timer", async () => {
    vi.useFakeTimers();
    const digest = digestToken("an issued read token");
    const credentials = new CredentialHolder({ producers: new Map() }, [
      { id: "t1", digest, kind: "read", expiresMs: Date.now() + 3_600_000 },
    ]);
    const listening = new Set<(next: Credentials) => void>();
    const onReplace = credentials.onReplace.bind(credentials);
    vi.spyOn(credentials, "onReplace").mockImplementation((listener) => {
      listening.add(listener);
      const stop = onReplace(listener);
      return () => listening.delete(listener) && stop();
    });
    const bus = new EventBus<WatchEvent>();
    const log = createLog({ level: "silent", destination: { write: () => {} } });
    const ac = new AbortController();
    const values = createContextValues().set(CREDENTIAL, digest);
    const ctx = { signal: ac.signal, values } as unknown as HandlerContext;
    const stream = watchEvents({ bus, log, credentials })({} as never, ctx)[Symbol.asyncIterator]();

    await stream.next();
    expect([bus.watchers, listening.size, vi.getTimerCount()]).toEqual([1, 1, 1]);
    // The handler is never resumed: nothing calls next() or return() on it again.
    ac.abort();
    expect([bus.watchers, listening.size, vi.getTimerCount()]).toEqual([0, 0, 0]);
  });
});
