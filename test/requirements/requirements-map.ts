/**
 * Checks `docs/requirements.md`, the map from each REQ of SPEC-0029 to what it asks, the modules that
 * implement it and the tests that show it, against the tree it describes. The map's shape, as the
 * checks read it:
 *
 * - a summary table with a row per REQ (`| REQ-n | … |`);
 * - a section per REQ (`### REQ-n: …`) with the bullets `**Asks.**`, `**Implemented in.**` (citing at
 *   least one module) and `**Tests.**` (citing at least one test file, each test title quoted after
 *   its file: `test/x.test.ts` ("a title", "another"));
 * - paths in backticks (`src/core/holds.ts`, `src/shell/forge/` (`gitea.ts`)), relative links;
 * - under `## Beyond SPEC-0029`, every bullet marked `**Beyond spec`.
 *
 * Every check returns its problems as lines, each naming the file and line it is about, so a failure
 * says what to fix.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { SUBSTITUTION, type TestTitle } from "./test-titles.js";

export interface MapCheck {
  /** The repository, or a fixture tree shaped like it. */
  readonly root: string;
  /** The map's path from `root`. */
  readonly mapFile: string;
  /** The REQ numbers the spec has. */
  readonly requirements: readonly number[];
  /** Every test title of the tree (`testTitles`). */
  readonly titles: readonly TestTitle[];
}

/** A bullet, table row or paragraph line of the map, its continuation lines joined with spaces. */
interface Block {
  /** 1-based line of its first line. */
  readonly line: number;
  readonly text: string;
  /** The `##` and `###` headings it sits under ("" before the first). */
  readonly chapter: string;
  readonly section: string;
}

const REQ_HEADING = /^REQ-(\d+)\b/;
/** A path the map cites from the repository's root. */
const ROOTED_PATH = /^(?:src|test|proto|starter-rules|scripts|bench|docs)(?:\/[\w.@-]+)*\/?$/;
/** A module named by its file alone, inside the folder cited before it in the same bullet. */
const BARE_MODULE = /^[\w.-]+\.tsx?$/;
const BEYOND = "Beyond SPEC-0029";

/** The map's problems by kind, each a list of lines; every list is empty when the map is whole. */
export interface MapProblems {
  /** A REQ of the spec with no section or no summary row; a section for a REQ the spec lacks. */
  readonly coverage: readonly string[];
  /** A REQ section without what it asks, a module or a test. */
  readonly sections: readonly string[];
  /** A cited path or relative link that does not resolve. */
  readonly citations: readonly string[];
  /** A quoted test title that is no title of the test file cited before it. */
  readonly testNames: readonly string[];
  /** A bullet under "Beyond SPEC-0029" not marked as such. */
  readonly beyondSpec: readonly string[];
  /** A test title naming a REQ the map has no section for. */
  readonly titles: readonly string[];
}

export function mapProblems(check: MapCheck): MapProblems {
  const blocks = blocksOf(fs.readFileSync(path.join(check.root, check.mapFile), "utf8"));
  return {
    coverage: coverageProblems(check, blocks),
    sections: sectionProblems(check, blocks),
    citations: citationProblems(check, blocks),
    testNames: testNameProblems(check, blocks),
    beyondSpec: beyondSpecProblems(check, blocks),
    titles: titleProblems(check, blocks),
  };
}

/** The REQ numbers a piece of text names: `REQ-4 to REQ-6` names 4, 5 and 6; another spec's are left out. */
export function reqsNamed(text: string): number[] {
  const found = new Set<number>();
  for (const m of text.matchAll(/(?:SPEC-(\d{4}) )?REQ-(\d+)(?: to REQ-(\d+))?/g)) {
    if (m[1] !== undefined && m[1] !== "0029") continue;
    const from = Number(m[2]);
    const to = m[3] === undefined ? from : Number(m[3]);
    for (let n = from; n <= to; n++) found.add(n);
  }
  return [...found].sort((a, b) => a - b);
}

/** The REQ numbers the map gives a section. */
function mappedReqs(blocks: readonly Block[]): Set<number> {
  const reqs = new Set<number>();
  for (const b of blocks) {
    const m = REQ_HEADING.exec(b.section);
    if (m?.[1] !== undefined) reqs.add(Number(m[1]));
  }
  return reqs;
}

function coverageProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const mapped = mappedReqs(blocks);
  const inSummary = new Set(
    blocks.flatMap((b) => {
      const m = /^\| REQ-(\d+) /.exec(b.text);
      return m?.[1] === undefined ? [] : [Number(m[1])];
    }),
  );
  const spec = new Set(check.requirements);
  return [
    ...check.requirements.flatMap((n) => [
      ...(mapped.has(n) ? [] : [`${check.mapFile}: REQ-${n} has no section "### REQ-${n}: …"`]),
      ...(inSummary.has(n) ? [] : [`${check.mapFile}: REQ-${n} has no row in the summary table`]),
    ]),
    ...[...mapped]
      .filter((n) => !spec.has(n))
      .map((n) => `${check.mapFile}: maps REQ-${n}, which the spec does not have`),
  ];
}

/** Each REQ section says what it asks, cites a module and cites a test file. */
function sectionProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const problems: string[] = [];
  for (const n of mappedReqs(blocks)) {
    const own = blocks.filter((b) => REQ_HEADING.exec(b.section)?.[1] === String(n));
    const bullet = (label: string) => own.find((b) => b.text.startsWith(`- **${label}.**`));
    const where = `${check.mapFile}:${own[0]?.line ?? 0}`;
    const asks = bullet("Asks");
    if (asks === undefined || asks.text.length <= "- **Asks.**".length)
      problems.push(`${where}: REQ-${n} does not say what it asks (- **Asks.** …)`);
    const modules = bullet("Implemented in");
    if (modules === undefined || !citedPaths(modules.text).some((p) => !p.startsWith("test/")))
      problems.push(
        `${where}: REQ-${n} cites no module that implements it (- **Implemented in.** \`src/…\`)`,
      );
    const tests = bullet("Tests");
    if (tests === undefined || !citedPaths(tests.text).some((p) => p.startsWith("test/")))
      problems.push(`${where}: REQ-${n} cites no test that shows it (- **Tests.** \`test/…\`)`);
  }
  return problems;
}

/** The rooted paths in a block's backticks, in order. */
function citedPaths(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].flatMap((m) =>
    m[1] !== undefined && ROOTED_PATH.test(m[1]) ? [m[1]] : [],
  );
}

/** Every cited path and relative link resolves; a bare module resolves inside the folder cited before it. */
function citationProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const problems: string[] = [];
  const exists = (rel: string) => fs.existsSync(path.join(check.root, rel));
  for (const b of blocks) {
    let folder: string | undefined;
    for (const m of b.text.matchAll(/`([^`]+)`/g)) {
      const token = m[1] ?? "";
      if (ROOTED_PATH.test(token)) {
        if (!exists(token)) problems.push(`${check.mapFile}:${b.line}: cites ${token}, which does not exist`);
        if (token.endsWith("/")) folder = token;
      } else if (BARE_MODULE.test(token)) {
        if (folder === undefined)
          problems.push(`${check.mapFile}:${b.line}: cites ${token} with no folder before it to find it in`);
        else if (!exists(folder + token))
          problems.push(`${check.mapFile}:${b.line}: cites ${token} in ${folder}, which does not exist`);
      }
    }
    for (const m of b.text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1] ?? "";
      if (/^[a-z]+:/.test(target)) continue;
      const rel = path.posix.join(path.posix.dirname(check.mapFile), target);
      if (!exists(rel)) problems.push(`${check.mapFile}:${b.line}: links to ${target}, which does not exist`);
    }
  }
  return problems;
}

/** Every title quoted in a Tests bullet is a title of the test file cited before it. */
function testNameProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const problems: string[] = [];
  for (const b of blocks) {
    if (!b.text.startsWith("- **Tests.**")) continue;
    // Each quote, and each test file cited, in the order they appear.
    const marks = [...b.text.matchAll(/`(test\/[^`]+)`|"((?:[^"\\]|\\.)+)"/g)];
    let file: string | undefined;
    for (const m of marks) {
      if (m[1] !== undefined) {
        file = m[1];
        continue;
      }
      const quoted = unescapeMarkdown(m[2] ?? "");
      if (file === undefined) {
        problems.push(`${check.mapFile}:${b.line}: quotes "${quoted}" before naming its test file`);
        continue;
      }
      const inFile = check.titles.filter((t) => t.file === file);
      if (!inFile.some((t) => titleMatches(t, quoted)))
        problems.push(`${check.mapFile}:${b.line}: quotes "${quoted}", which is no test title in ${file}`);
    }
  }
  return problems;
}

/** Whether the map's quote is this title: the same words, a substitution matching any text. */
function titleMatches(title: TestTitle, quoted: string): boolean {
  const words = (s: string) => s.replace(/\s+/g, " ").trim();
  if (title.kind === "expression") return false;
  if (title.kind === "literal") return words(title.text) === words(quoted);
  const pattern = words(title.text)
    .split(SUBSTITUTION)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".+");
  return new RegExp(`^${pattern}$`).test(words(quoted));
}

/** Under "Beyond SPEC-0029", every bullet says so first. */
function beyondSpecProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const under = blocks.filter((b) => b.chapter === BEYOND);
  if (under.length === 0) return [`${check.mapFile}: has no "## ${BEYOND}" chapter`];
  return under
    .filter((b) => b.text.startsWith("- ") && !b.text.startsWith("- **Beyond spec"))
    .map((b) => `${check.mapFile}:${b.line}: a bullet under "${BEYOND}" is not marked **Beyond spec**`);
}

/** Every REQ a test title names has its section in the map. */
function titleProblems(check: MapCheck, blocks: readonly Block[]): string[] {
  const mapped = mappedReqs(blocks);
  return check.titles.flatMap((t) =>
    reqsNamed(t.text)
      .filter((n) => !mapped.has(n))
      .map(
        (n) =>
          `${t.file}:${t.line}: the title "${t.text}" names REQ-${n}, which ${check.mapFile} does not map`,
      ),
  );
}

/** Markdown's backslash escapes (`\_\_other\_\_`) as the characters they stand for. */
function unescapeMarkdown(text: string): string {
  return text.replace(/\\([\\`*_{}[\]()#+\-.!<>|"])/g, "$1");
}

/** The map's bullets, table rows and paragraph lines, each with the headings it sits under. */
function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  let open: { line: number; end: number; text: string; chapter: string; section: string } | undefined;
  let chapter = "";
  let section = "";
  const close = () => {
    if (open !== undefined)
      blocks.push({ line: open.line, text: open.text, chapter: open.chapter, section: open.section });
    open = undefined;
  };
  markdown.split("\n").forEach((raw, i) => {
    const line = i + 1;
    // A bullet's wrapped lines are indented and follow it directly.
    if (open !== undefined && open.end === line - 1 && /^ {2,}\S/.test(raw)) {
      open.text += ` ${raw.trim()}`;
      open.end = line;
      return;
    }
    close();
    const heading = /^(#{2,3}) (.*)$/.exec(raw);
    if (heading?.[1] === "##") {
      chapter = heading[2] ?? "";
      section = "";
    } else if (heading?.[1] === "###") section = heading[2] ?? "";
    else if (raw.trim() !== "") open = { line, end: line, text: raw.trim(), chapter, section };
  });
  close();
  return blocks;
}
