/**
 * What the import graph cannot see, read from each file's syntax tree: SQL text in string and template
 * literals, a `Db` handle (the name `Db`, or better-sqlite3 named as a module), and string literals equal
 * to a given name (an agent adapter's). Comments are not read: only code says where these things live.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

/** One thing found: where, and the text that matched (or the literal, cut short). */
export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** A file of the tree, parsed: its path from the tree's root (`src/shell/cli.ts`) and its syntax tree. */
export interface Parsed {
  readonly file: string;
  readonly source: ts.SourceFile;
}

/** Every TypeScript file under `root/src`, parsed, in path order. */
export function parseTree(root: string): Parsed[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) files.push(rel);
    }
  };
  walk("src");
  return files.sort().map((file) => ({
    file,
    source: ts.createSourceFile(
      file,
      fs.readFileSync(path.join(root, file), "utf8"),
      ts.ScriptTarget.Latest,
      true,
    ),
  }));
}

/**
 * A SQL statement's opening: SELECT … FROM, INSERT/REPLACE INTO, UPDATE … SET, DELETE FROM, CREATE/DROP of
 * a table, index, view or trigger, ALTER TABLE, PRAGMA, WITH … AS (. Upper case, as the store writes its
 * statements, so prose ("select a rule from the list") is not taken for SQL.
 */
const SQL_STATEMENT =
  /\b(?:SELECT\b[\s\S]*?\bFROM|(?:INSERT(?:\s+OR\s+[A-Z]+)?|REPLACE)\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|(?:CREATE|DROP)\s+(?:(?:TEMP|TEMPORARY|UNIQUE|VIRTUAL)\s+)*(?:TABLE|INDEX|VIEW|TRIGGER)|ALTER\s+TABLE)\b|\bPRAGMA\s+\w+|\bWITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(/;

const lineOf = (source: ts.SourceFile, n: ts.Node) =>
  source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1;

/** Each node `pick` names text for, in source order. */
function collect({ file, source }: Parsed, pick: (n: ts.Node) => string | undefined): Finding[] {
  const found: Finding[] = [];
  const visit = (n: ts.Node): void => {
    const text = pick(n);
    if (text !== undefined) found.push({ file, line: lineOf(source, n), text });
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

/** A literal's text; a template's with each `${…}` as `?`. Undefined for any other node. */
function literalText(n: ts.Node): string | undefined {
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
  if (ts.isTemplateExpression(n))
    return n.head.text + n.templateSpans.map((s) => `?${s.literal.text}`).join("");
  return undefined;
}

/** String and template literals that hold a SQL statement. */
export function sqlTexts(parsed: Parsed): Finding[] {
  return collect(parsed, (n) => {
    const text = literalText(n);
    const m = text === undefined ? null : SQL_STATEMENT.exec(text);
    return m === null ? undefined : m[0].replace(/\s+/g, " ").slice(0, 60);
  });
}

/** The store's handle named: the identifier `Db` (imported, declared or used as a type), or better-sqlite3. */
export function dbHandles(parsed: Parsed): Finding[] {
  return collect(parsed, (n) => {
    if (ts.isIdentifier(n) && n.text === "Db") return "Db";
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && n.text === "better-sqlite3")
      return '"better-sqlite3"';
    return undefined;
  });
}

/** String literals (string types included) whose whole text is one of `names`. */
export function literalsOf(parsed: Parsed, names: readonly string[]): Finding[] {
  return collect(parsed, (n) =>
    (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && names.includes(n.text)
      ? JSON.stringify(n.text)
      : undefined,
  );
}

/** Findings as lines for a failing test: `file:line text`. */
export const formatFindings = (found: readonly Finding[]): string[] =>
  found.map((f) => `${f.file}:${f.line} ${f.text}`);
