import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdTable } from "../../src/cel/ast.js";
import { runs } from "../property-runs.js";

describe("an id table", () => {
  it("answers as a Map filled with the same writes does, and iterates in id order", () => {
    const writes = fc.array(fc.tuple(fc.integer({ min: 1, max: 200 }), fc.integer()), { maxLength: 60 });
    fc.assert(
      fc.property(writes, fc.integer({ min: 0, max: 210 }), (ws, probe) => {
        const table = new IdTable<number>();
        const map = new Map<number, number>();
        for (const [id, v] of ws) {
          table.set(id, v);
          map.set(id, v);
        }
        expect(table.size).toBe(map.size);
        expect(table.get(probe)).toBe(map.get(probe));
        expect(table.has(probe)).toBe(map.has(probe));
        const sorted = [...map].sort((a, b) => a[0] - b[0]);
        expect([...table]).toEqual(sorted);
        expect([...table.keys()]).toEqual(sorted.map(([id]) => id));
        expect([...table.values()]).toEqual(sorted.map(([, v]) => v));
        const seen: [number, number][] = [];
        table.forEach((v, id) => {
          seen.push([id, v]);
        });
        expect(seen).toEqual(sorted);
      }),
      { numRuns: runs(300) },
    );
  });
});
