/**
 * RuleService's annotation methods: ListAnnotations (an annotate-level rule's notes, on one graph node
 * or all) and ListAnnotatedNodes (the nodes that have any, a page after a node), read from the store.
 */
import { checkLength, limitOf, MAX_NODE, withinBudget } from "./requests.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { serve } from "./status.js";

export function annotationMethods(
  deps: Pick<RuleServiceDeps, "reads">,
): Pick<RuleServiceImpl, "listAnnotations" | "listAnnotatedNodes"> {
  const { reads } = deps;
  return {
    listAnnotations: (req) =>
      serve(`ListAnnotations ${req.node}`, async () => {
        const limit = limitOf(req.limit, "annotation");
        checkLength(req.node, "node", MAX_NODE);
        const rows = await reads.annotations(req.node === "" ? undefined : req.node, limit + 1);
        const { kept, truncated } = withinBudget(rows, limit, (a) => [a.message, a.node]);
        return {
          annotations: kept.map((a) => ({
            fireId: a.fire_id,
            node: a.node,
            rule: a.rule,
            message: a.message,
            atMs: BigInt(a.at),
          })),
          truncated,
        };
      }),

    listAnnotatedNodes: (req) =>
      serve("ListAnnotatedNodes", async () => {
        const limit = limitOf(req.limit, "node");
        checkLength(req.after, "after", MAX_NODE);
        const rows = await reads.annotatedNodes(req.after, limit + 1);
        const { kept, truncated } = withinBudget(rows, limit, (n) => [n.node]);
        return {
          nodes: kept.map((n) => ({ node: n.node, annotations: n.annotations, lastAtMs: BigInt(n.last_at) })),
          truncated,
        };
      }),
  };
}
