/**
 * Work per key, one at a time (`support/turns.ts`): a key's pieces run in the order
 * asked, each after the one before has settled (a failure too), other keys alongside, and a key whose
 * work is done holds no entry.
 */
import { describe, expect, it } from "vitest";
import { KeyedTurns } from "../../../src/shell/support/turns.js";

/** A promise and the hand that settles it. */
function gate() {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Once every promise settled so far has run its reactions. */
const settledAll = () => new Promise((resolve) => setImmediate(resolve));

describe("keyed turns", () => {
  it("runs a key's work one at a time in order, another key's alongside, and forgets an idle key", async () => {
    const turns = new KeyedTurns();
    const log: string[] = [];
    const first = gate();
    const a1 = turns.run("a", async () => {
      log.push("a1 start");
      await first.opened;
      log.push("a1 end");
      return 1;
    });
    const a2 = turns.run("a", async () => {
      log.push("a2");
      return 2;
    });
    const b1 = turns.run("b", async () => {
      log.push("b1");
      return 3;
    });
    expect(await b1).toBe(3);
    await settledAll();
    expect(log).toEqual(["a1 start", "b1"]);
    expect(turns.busy).toBe(1);
    first.open();
    expect(await Promise.all([a1, a2])).toEqual([1, 2]);
    expect(log).toEqual(["a1 start", "b1", "a1 end", "a2"]);
    await settledAll();
    expect(turns.busy).toBe(0);
  });

  it("a failed piece rejects its own caller and the next piece still runs", async () => {
    const turns = new KeyedTurns();
    const failed = turns.run("a", async () => {
      throw new Error("disk I/O error");
    });
    const next = turns.run("a", async () => "ran");
    await expect(failed).rejects.toThrow("disk I/O error");
    expect(await next).toBe("ran");
  });
});
