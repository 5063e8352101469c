/**
 * Checks that run after type checking, on the checked tree. The rules core uses the nesting limit
 * (SPEC-0029 REQ-6 allows two levels) and its own validators for the windowed primitives' literal rules.
 */
import type { Expr } from "../ast.js";
import { children } from "../ast.js";
import type { Diagnostic } from "../diagnostics.js";
import type { CheckedAst } from "./checker.js";

export type Validator = (checked: CheckedAst) => readonly Diagnostic[];

/**
 * Comprehensions may nest at most `limit` deep. A comprehension used as another's range is a chain
 * (`l.filter(…).map(…)`), not nesting, and does not count.
 */
export function comprehensionNestingLimit(limit: number): Validator {
  return (checked) => {
    const errors: Diagnostic[] = [];
    const visit = (e: Expr, depth: number): void => {
      if (e.kind === "comprehension") {
        const inner = depth + 1;
        if (inner > limit) {
          errors.push({
            code: "validation",
            message: `comprehensions nest ${inner} deep, more than the limit of ${limit}`,
            offset: checked.offsets.get(e.id) ?? 0,
          });
          return;
        }
        visit(e.iterRange, depth);
        for (const part of [e.accuInit, e.loopCondition, e.loopStep, e.result]) visit(part, inner);
        return;
      }
      for (const c of children(e)) visit(c, depth);
    };
    visit(checked.expr, 0);
    return errors;
  };
}
