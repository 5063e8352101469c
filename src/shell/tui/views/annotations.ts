/**
 * Annotations: the graph nodes that carry annotations (ListAnnotatedNodes, paged); Enter lists a node's
 * annotations, and Enter on one hops to its fire's explanation.
 */
import type { AnnotationInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { cell, clockTime, instant, type TuiText } from "../text.js";
import type { Row, ViewSpec } from "./view.js";

export const annotationsView: ViewSpec = {
  name: "Annotations",
  header: `${"NODE".padEnd(40)} ${"COUNT".padEnd(6)} NEWEST`,
  empty: "no annotations: rules annotate the nodes they fire on",
  rows: (s, t) => {
    const rows: Row[] = s.nodes.map((n) => ({
      id: n.node,
      text: `${cell(t.printable(n.node), 40)} ${cell(String(n.annotations), 6)} ${instant(n.lastAtMs)}`,
      drill: { kind: "node", node: n.node },
    }));
    if (s.nodesTruncated)
      rows.push({ id: "\u0000more", text: "(more nodes: move down to read the next page)" });
    return rows;
  },
};

/** One node's annotations, newest first: Enter hops to the fire. */
export const nodeRows = (annotations: readonly AnnotationInfo[], t: TuiText): Row[] =>
  annotations.map((a) => ({
    id: a.fireId,
    text: `${clockTime(a.atMs)} ${cell(t.printable(a.rule), 26)} ${cell(t.printable(a.fireId), 10)} ${t.printable(a.message)}`,
    drill: { kind: "fire", fireId: a.fireId },
  }));

export const NODE_HEADER = `${"TIME".padEnd(8)} ${"RULE".padEnd(26)} ${"FIRE".padEnd(10)} MESSAGE`;
