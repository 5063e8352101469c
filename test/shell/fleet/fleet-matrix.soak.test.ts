/**
 * The fleet's link matrix, run by `npm run soak` only (PROPERTY_RUNS_FACTOR set): four laptops, two
 * sessions each, half installed to fail closed and half open, make tool calls in an order drawn from the
 * run's seed while their links drop and return at random. Whatever the order: every PostToolUse is in the
 * journal exactly once, each session's rows in the order its calls were made; a PreToolUse made while its
 * laptop is cut off is answered by that laptop's fail mode (denied when closed, let through when open)
 * and never recorded later; and the spools end empty once the links are back.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "../agents/hook-harness.js";
import { edit, events, FleetLab, type Machine, RUN_NETNS } from "./fleet-lab.js";

const SOAK = process.env.PROPERTY_RUNS_FACTOR !== undefined;
const SEED = Number(process.env.FC_SEED ?? 32);
const LAPTOPS = 4;
const SESSIONS = 2;
/** Steps of the schedule: 600 at the soak's usual factor of 50. */
const STEPS = Math.max(60, 12 * Number(process.env.PROPERTY_RUNS_FACTOR ?? 5));

type Step =
  | { readonly kind: "link"; readonly laptop: number }
  | { readonly kind: "pre" | "post"; readonly laptop: number; readonly session: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("link" as const), laptop: fc.nat(LAPTOPS - 1) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constantFrom("pre" as const, "post" as const),
      laptop: fc.nat(LAPTOPS - 1),
      session: fc.nat(SESSIONS - 1),
    }),
  },
);

describe.skipIf(!SOAK || !RUN_NETNS)("the fleet's link matrix", () => {
  let lab: FleetLab;
  beforeAll(async () => {
    lab = await FleetLab.start(LAPTOPS);
    for (const [i, m] of lab.machines.entries()) {
      const r = await lab.install(m, `m${i}`, await lab.enrolmentCode(m, `m${i}`), [
        "--fail",
        i % 2 === 0 ? "closed" : "open",
      ]);
      expect(r.code, r.stderr).toBe(0);
    }
  }, 120_000);
  afterAll(async () => {
    await lab?.dispose();
  });

  it("links drop and return at random: nothing lost, nothing twice, each session in order, fail modes kept", async () => {
    const [steps] = fc.sample(fc.array(step, { minLength: STEPS, maxLength: STEPS }), {
      seed: SEED,
      numRuns: 1,
    });
    console.log(`fleet matrix: FC_SEED=${SEED}, ${STEPS} steps`);
    const session = (laptop: number, s: number) => `m${laptop}-s${s}-${SEED}`;
    const up = Array.from({ length: LAPTOPS }, () => true);
    const made = new Map<string, string[]>();
    let cutOff = 0;
    const call = (m: Machine, laptop: number, event: string, payload: unknown) =>
      lab.hook(m, `m${laptop}`, event, payload);
    for (const [laptop, m] of lab.machines.entries())
      for (let s = 0; s < SESSIONS; s++) {
        const ran = await call(m, laptop, "SessionStart", events(m, session(laptop, s)).SessionStart);
        expect(ran.code, ran.stderr).toBe(0);
        made.set(session(laptop, s), []);
      }
    try {
      for (const [n, st] of (steps as Step[]).entries()) {
        const m = lab.machines[st.laptop] as Machine;
        if (st.kind === "link") {
          up[st.laptop] = !up[st.laptop];
          m.laptop.link(up[st.laptop] as boolean);
          continue;
        }
        const id = session(st.laptop, st.session);
        if (!up[st.laptop]) cutOff += 1;
        if (st.kind === "post") {
          const file = `src/f${n}.ts`;
          const ran = await call(m, st.laptop, "PostToolUse", edit(m, id, file, n));
          expect(ran.code, ran.stderr).toBe(0);
          made.get(id)?.push(file);
          continue;
        }
        const pre = { ...events(m, id).PreToolUse, tool_use_id: `toolu_pre_${n}` };
        const ran = await call(m, st.laptop, "PreToolUse", pre);
        expect(ran.code, ran.stderr).toBe(0);
        if (!up[st.laptop]) {
          const decision =
            ran.stdout === "" ? "allow" : JSON.parse(ran.stdout).hookSpecificOutput?.permissionDecision;
          expect(decision, `step ${n}: a PreToolUse cut off on laptop ${st.laptop}`).toBe(
            st.laptop % 2 === 0 ? "deny" : "allow",
          );
        }
      }
    } finally {
      for (const [i, m] of lab.machines.entries()) if (!up[i]) m.laptop.link(true);
    }
    console.log(`fleet matrix: ${cutOff} of the calls made while their laptop was cut off`);
    // A schedule that never cut a call off would test nothing here: the seed must give some.
    expect(cutOff).toBeGreaterThan(0);
    // Each session's next call, the links back, delivers what waits in its laptop's spool.
    for (const [laptop, m] of lab.machines.entries())
      for (let s = 0; s < SESSIONS; s++) {
        const ran = await call(m, laptop, "Stop", events(m, session(laptop, s)).Stop);
        expect(ran.code, ran.stderr).toBe(0);
      }
    for (const [id, files] of made) {
      await lab.fleet.until(
        () => rowsOf(lab.fleet, id).filter((r) => r.type === "tool").length >= files.length,
        `${id}'s ${files.length} tool rows`,
        60_000,
      );
      const tools = rowsOf(lab.fleet, id).filter((r) => r.type === "tool");
      expect(
        tools.map((r) => (r.event.paths as string[])[0]),
        id,
      ).toEqual(files);
    }
    for (const m of lab.machines) {
      const spool = path.join(m.laptop.env.XDG_STATE_HOME as string, "harness", "agents", "spool");
      const waiting = fs.existsSync(spool) ? fs.readdirSync(spool).filter((f) => f.endsWith(".json")) : [];
      expect(waiting, m.laptop.ns).toEqual([]);
    }
  }, 900_000);
});
