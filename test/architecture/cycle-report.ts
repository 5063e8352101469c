/** Cycles as text for a failing test: the loop on one line, then the imports behind each step. */
import type { Cycle } from "./cycles.js";
import type { Import } from "./import-graph.js";

export function formatCycles(cycles: readonly Cycle[]): string {
  return cycles.map(formatCycle).join("\n");
}

function formatCycle({ nodes, steps }: Cycle): string {
  const lines = [[...nodes, nodes[0]].join(" → ")];
  steps.forEach((imports, k) => {
    const from = nodes[k] as string;
    const to = nodes[(k + 1) % nodes.length] as string;
    // Between files a step is its one import: no heading to repeat it.
    const isFileStep = imports.length === 1 && imports[0]?.from === from && imports[0]?.to === to;
    if (!isFileStep) lines.push(`  ${from} → ${to}`);
    const indent = isFileStep ? "  " : "    ";
    for (const i of imports) lines.push(`${indent}${formatImport(i)}`);
  });
  return lines.join("\n");
}

const formatImport = (i: Import): string => `${i.from} → ${i.to}${i.kind === "static" ? "" : ` (${i.kind})`}`;
