import { describe, expect, it } from "vitest";
import { promised } from "../../../src/shell/store/async-port.js";

class Base {
  protected n = 1;
  inherited(): string {
    return "base";
  }
  overridden(): string {
    return "base";
  }
}

class Counter extends Base {
  readonly label = "counter";
  bump(by: number): number {
    this.n += by;
    return this.n;
  }
  override overridden(): string {
    return "counter";
  }
  fail(): number {
    throw new Error("no such row");
  }
}

describe("promised: a synchronous store object behind its asynchronous door", () => {
  it("answers each method with a promise of its result, bound to the object", async () => {
    const c = new Counter();
    const port = promised(c);
    const answer = port.bump(2);
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).resolves.toBe(3);
    // The work is done at the call, as SQLite's synchronous statement is.
    expect(c.bump(0)).toBe(3);
  });

  it("reaches methods of the classes it extends, the most derived one first", async () => {
    const port = promised(new Counter());
    await expect(port.inherited()).resolves.toBe("base");
    await expect(port.overridden()).resolves.toBe("counter");
  });

  it("turns a throw into a rejection, never a throw at the call", async () => {
    const port = promised(new Counter());
    let answer: Promise<number> | undefined;
    expect(() => {
      answer = port.fail();
    }).not.toThrow();
    await expect(answer).rejects.toThrow("no such row");
  });

  it("keeps its own properties that are not methods", () => {
    expect(promised(new Counter()).label).toBe("counter");
  });
});
