/**
 * Annotations: the graph nodes that carry annotations (ListAnnotatedNodes, paged); Enter lists a node's
 * annotations, and Enter on one hops to its fire's explanation.
 */
import type { AnnotationInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { layout } from "../columns.js";
import { clockTime, instant, type TuiText } from "../text.js";
import type { Row, ViewSpec } from "./view.js";

const nodes = (screen: number) =>
  layout(
    [
      { title: "NODE", width: 40, upTo: 96 },
      { title: "COUNT", width: 6 },
    ],
    "NEWEST",
    screen,
  );

const annotations = (screen: number) =>
  layout(
    [
      { title: "TIME", width: 8 },
      { title: "RULE", width: 26, upTo: 40 },
      { title: "FIRE", width: 10, upTo: 16 },
    ],
    "MESSAGE",
    screen,
  );

export const annotationsView: ViewSpec = {
  name: "Annotations",
  header: (screen) => nodes(screen).header,
  empty: "no annotations: rules annotate the nodes they fire on",
  rows: (s, t, screen) => {
    const l = nodes(screen);
    const rows: Row[] = s.nodes.map((n) => ({
      id: n.node,
      text: l.line([t.printable(n.node), String(n.annotations)], instant(n.lastAtMs)),
      drill: { kind: "node", node: n.node },
    }));
    if (s.nodesTruncated)
      rows.push({ id: "\u0000more", text: "(more nodes: move down to read the next page)" });
    return rows;
  },
};

/** One node's annotations, newest first: Enter hops to the fire. */
export function nodeRows(as: readonly AnnotationInfo[], t: TuiText, screen: number): Row[] {
  const l = annotations(screen);
  return as.map((a) => ({
    id: a.fireId,
    text: l.line([clockTime(a.atMs), t.printable(a.rule), t.printable(a.fireId)], t.printable(a.message)),
    drill: { kind: "fire", fireId: a.fireId },
  }));
}

/** The header of a node's annotations. */
export const nodeHeader = (screen: number): string => annotations(screen).header;
