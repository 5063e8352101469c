/**
 * Import cycles at a chosen grain: `nodeOf` maps each file to its node (itself, or its folder), and
 * two nodes are joined when a file of one imports a file of the other. For every edge that lies on a
 * cycle, the shortest cycle through it is reported, each cycle once: so removing every edge reported
 * removes every cycle, and a dense tangle is not listed as its exponentially many loops.
 */
import type { Import } from "./import-graph.js";

/** A loop of nodes: each imports the next, and the last imports the first. */
export interface Cycle {
  readonly nodes: readonly string[];
  /** `steps[i]`: the imports that take `nodes[i]` to the next node. */
  readonly steps: readonly (readonly Import[])[];
}

/** A file's node, or undefined to leave the file out. */
export type NodeOf = (file: string) => string | undefined;

/** Every file is its own node. */
export const eachFile: NodeOf = (file) => file;

/**
 * The folders of src/shell: each top-level folder is one node (`src/shell/rpc/`, its `gen/` included)
 * and the files directly in src/shell are one more (`src/shell/*`). Files outside src/shell are left out.
 */
export const shellFolder: NodeOf = (file) => {
  const prefix = "src/shell/";
  if (!file.startsWith(prefix)) return undefined;
  const rest = file.slice(prefix.length);
  const slash = rest.indexOf("/");
  return slash < 0 ? `${prefix}*` : `${prefix}${rest.slice(0, slash + 1)}`;
};

export function findCycles(imports: readonly Import[], nodeOf: NodeOf): Cycle[] {
  // edges.get(a).get(b): the imports from node a to node b.
  const edges = new Map<string, Map<string, Import[]>>();
  for (const i of imports) {
    const from = nodeOf(i.from);
    const to = nodeOf(i.to);
    if (from === undefined || to === undefined || from === to) continue;
    const out = edges.get(from) ?? new Map<string, Import[]>();
    edges.set(from, out);
    out.set(to, [...(out.get(to) ?? []), i]);
  }
  const cycles = new Map<string, Cycle>();
  for (const [from, out] of edges) {
    for (const to of out.keys()) {
      const back = shortestPath(edges, to, from);
      if (back === undefined) continue;
      const nodes = canonical([from, ...back.slice(0, -1)]);
      const key = nodes.join("\n");
      if (cycles.has(key)) continue;
      const steps = nodes.map((n, k) => edges.get(n)?.get(nodes[(k + 1) % nodes.length] as string) ?? []);
      cycles.set(key, { nodes, steps });
    }
  }
  return [...cycles.entries()]
    .sort(([ka, a], [kb, b]) => a.nodes.length - b.nodes.length || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([, c]) => c);
}

/** The nodes from `start` to `goal`, both included, by breadth-first search; undefined when none. */
function shortestPath(
  edges: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
  start: string,
  goal: string,
): string[] | undefined {
  const cameFrom = new Map<string, string | undefined>([[start, undefined]]);
  const queue = [start];
  for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
    if (n === goal) {
      const path: string[] = [];
      for (let at: string | undefined = n; at !== undefined; at = cameFrom.get(at)) path.unshift(at);
      return path;
    }
    for (const next of [...(edges.get(n)?.keys() ?? [])].sort()) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, n);
      queue.push(next);
    }
  }
  return undefined;
}

/** The cycle rotated to start at its least node, so each loop has one spelling. */
function canonical(nodes: readonly string[]): string[] {
  const least = nodes.reduce((min, n, k) => (n < (nodes[min] as string) ? k : min), 0);
  return [...nodes.slice(least), ...nodes.slice(0, least)];
}
