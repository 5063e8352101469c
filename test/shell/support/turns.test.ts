/** `Turns`: each piece of work starts once the ones asked for before it have settled. */
import { describe, expect, it } from "vitest";
import { Turns } from "../../../src/shell/support/turns.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("turns", () => {
  it("runs each turn after the one before has settled, in the order asked, a failure included", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const turn = (name: string, fail = false) =>
      turns.run(async () => {
        log.push(`${name} starts`);
        await tick();
        log.push(`${name} ends`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([turn("a"), turn("b", true), turn("c")]);
    expect(log).toEqual(["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  });
});
