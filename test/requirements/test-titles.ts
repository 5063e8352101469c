/**
 * The titles of a tree's tests, read from the source with the TypeScript parser rather than by running
 * them: the first argument of every `describe`, `it`, `test` and `suite` call, modifiers and `.each`
 * tables included (`it.skip("…")`, `describe.each(rows)("…")`). A title built with a template literal
 * keeps its text and shows each substitution as `{…}`; a title that is an expression (a variable, a
 * call) cannot be read without running the file and is kept as its source text, marked `expression`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

/** How a title was written: a plain string, a template literal with substitutions, or an expression. */
export type TitleKind = "literal" | "template" | "expression";

export interface TestTitle {
  /** The file's path from the tree's root, with `/` separators. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  readonly kind: TitleKind;
  /** The title as written; for a template, `{…}` stands for each substitution. */
  readonly text: string;
}

/** What stands for each substitution in a template title's text. */
export const SUBSTITUTION = "{…}";

const DECLARERS = new Set(["describe", "it", "test", "suite"]);
/** Members that return a declarer taking a title next (`it.each(rows)("title", …)`), not a title. */
const FACTORIES = new Set(["each", "for", "skipIf", "runIf"]);

/** Every file under `dir` (a path from `root`) whose name `isTestFile` accepts, sorted. */
export function testFiles(root: string, dir: string, isTestFile: (name: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && isTestFile(entry.name)) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

/** The titles of one file, in source order. `file` is its path from `root`. */
export function titlesOf(root: string, file: string): TestTitle[] {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  const kind = file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const titles: TestTitle[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && declaresTest(node.expression)) {
      const first = node.arguments[0];
      if (first !== undefined) {
        const line = source.getLineAndCharacterOfPosition(first.getStart(source)).line + 1;
        titles.push({ file, line, ...titleText(first, source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return titles;
}

/** The titles of every file `testFiles` finds. */
export function testTitles(root: string, dir: string, isTestFile: (name: string) => boolean): TestTitle[] {
  return testFiles(root, dir, isTestFile).flatMap((file) => titlesOf(root, file));
}

/**
 * Whether a call's callee declares a test: a declarer (`it`), a declarer with modifiers (`it.skip`,
 * `describe.concurrent.only`), or what a factory returns (`it.each(rows)`). The factory call itself
 * (`it.each(rows)`) takes a table, not a title.
 */
function declaresTest(callee: ts.Expression): boolean {
  if (ts.isIdentifier(callee)) return DECLARERS.has(callee.text);
  if (ts.isPropertyAccessExpression(callee))
    return !FACTORIES.has(callee.name.text) && declaresTest(callee.expression);
  if (ts.isCallExpression(callee) && ts.isPropertyAccessExpression(callee.expression))
    return FACTORIES.has(callee.expression.name.text) && declaresTest(callee.expression.expression);
  return false;
}

function titleText(node: ts.Expression, source: ts.SourceFile): { kind: TitleKind; text: string } {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    return { kind: "literal", text: node.text };
  if (ts.isTemplateExpression(node))
    return {
      kind: "template",
      text: node.head.text + node.templateSpans.map((s) => SUBSTITUTION + s.literal.text).join(""),
    };
  return { kind: "expression", text: node.getText(source) };
}
