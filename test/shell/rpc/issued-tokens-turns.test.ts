/**
 * `IssuedTokens` over the store's asynchronous door, on both backends: what its synchronous calls made
 * atomic stays so with awaits between them. Two mints of one label side by side put one token in force, and of two
 * reads of the tokens in force that overlap, an older answer landing last is not taken.
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../src/shell/errors.js";
import { IssuedTokens } from "../../../src/shell/rpc/issued-tokens.js";
import type { StoreDoor } from "../../../src/shell/store/store-door.js";
import { BACKENDS, freshDoors } from "../store/fresh-doors.js";

const door = freshDoors("token_turns");
const clock = () => Date.UTC(2026, 0, 20);

/** The door's tokens; `holdNext()` makes the next read of the tokens in force answer late. */
async function heldTokens(
  backend: StoreDoor["backend"],
): Promise<{ readonly port: StoreDoor["tokens"]; holdNext(): () => void }> {
  const store = (await door(backend)).tokens;
  let gate: Promise<void> | undefined;
  return {
    port: {
      insert: (t) => store.insert(t),
      all: () => store.all(),
      revoke: (ids, now) => store.revoke(ids, now),
      redeem: (code, tokens, now) => store.redeem(code, tokens, now),
      revokeGatewayOfRun: (run, now) => store.revokeGatewayOfRun(run, now),
      gatewayIdsOfRun: (run) => store.gatewayIdsOfRun(run),
      // Asked at once; answered when its gate opens.
      inForce: async (now) => {
        const held = gate;
        gate = undefined;
        const rows = await store.inForce(now);
        if (held !== undefined) await held;
        return rows;
      },
    },
    holdNext: () => {
      let open = () => {};
      gate = new Promise((resolve) => {
        open = resolve;
      });
      return open;
    },
  };
}

describe.each(BACKENDS)("issued tokens over the store's door on %s", (backend) => {
  it("mints one control token of a label when two are asked for side by side", async () => {
    const { port } = await heldTokens(backend);
    const tokens = await IssuedTokens.open(port, clock);
    const results = await Promise.allSettled([
      tokens.create({ kind: "control", label: "alice" }),
      tokens.create({ kind: "control", label: "alice" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidArgumentError);
    expect((await tokens.list(false)).filter((t) => t.label === "alice")).toHaveLength(1);
  });

  it("keeps a revoked token refused when a reread asked before the revocation answers after it", async () => {
    const { port, holdNext } = await heldTokens(backend);
    const tokens = await IssuedTokens.open(port, clock);
    const { id, token } = await tokens.create({ kind: "read" });
    const open = holdNext();
    // A closed run's reread, read before the revocation and answered after the revocation's own.
    const stale = tokens.reread();
    expect(await tokens.revoke([id])).toEqual([id]);
    expect(tokens.identify(token)).toBeUndefined();
    open();
    await stale;
    expect(tokens.identify(token)).toBeUndefined();
    expect(tokens.credentials.some((c) => c.id === id)).toBe(false);
  });
});
