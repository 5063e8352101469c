/**
 * `docs/requirements.md` is the map from each REQ of SPEC-0029 to what it asks, the modules that
 * implement it and the tests that show it. These tests hold it to the tree: every REQ of the spec has
 * its line, modules and tests; every REQ a test title names is mapped; every module, test file, test
 * title and link it cites exists. A fixture tree (`test/fixtures/requirements/`) shows each check
 * failing.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type MapCheck, mapProblems, reqsNamed } from "./requirements/requirements-map.js";
import { testTitles, titlesOf } from "./requirements/test-titles.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const FIXTURE = fileURLToPath(new URL("fixtures/requirements/tree", import.meta.url));

/** SPEC-0029's requirements: REQ-1 to REQ-21 (its error-handling standards have no number). */
const SPEC_0029 = Array.from({ length: 21 }, (_, i) => i + 1);
const isTestFile = (name: string) => /\.test\.tsx?$/.test(name);

describe("docs/requirements.md, the map of SPEC-0029", () => {
  const check: MapCheck = {
    root: REPO,
    mapFile: "docs/requirements.md",
    requirements: SPEC_0029,
    titles: testTitles(REPO, "test", isTestFile),
  };
  const problems = mapProblems(check);

  it("has a section and a summary row for every REQ of SPEC-0029, and for no other", () => {
    expect(problems.coverage).toEqual([]);
  });

  it("says for every REQ what it asks, the modules that implement it and the tests that show it", () => {
    expect(problems.sections).toEqual([]);
  });

  it("cites only modules, test files and links that exist", () => {
    expect(problems.citations).toEqual([]);
  });

  it("quotes only test titles that are in the test file it cites", () => {
    expect(problems.testNames).toEqual([]);
  });

  it("marks everything beyond SPEC-0029 as beyond spec", () => {
    expect(problems.beyondSpec).toEqual([]);
  });

  it("maps every REQ a test title in test/ names", () => {
    expect(check.titles.length).toBeGreaterThan(500);
    expect(problems.titles).toEqual([]);
  });
});

describe("the map's checks, on a fixture tree", () => {
  const fixture = (mapFile: string): MapCheck => ({
    root: FIXTURE,
    mapFile,
    requirements: [1, 2, 3],
    titles: testTitles(FIXTURE, "test", (name) => name.endsWith(".fixture.ts")),
  });

  it("read every title statically: literals, templates with their substitutions marked, .each and modifiers", () => {
    expect(titlesOf(FIXTURE, "test/holds.fixture.ts")).toEqual([
      { file: "test/holds.fixture.ts", line: 8, kind: "literal", text: "REQ-1: holds" },
      { file: "test/holds.fixture.ts", line: 9, kind: "literal", text: "places a hold" },
      {
        file: "test/holds.fixture.ts",
        line: 13,
        kind: "template",
        text: "REQ-2 to REQ-3: releases after {…} ticks",
      },
      { file: "test/holds.fixture.ts", line: 17, kind: "literal", text: "REQ-2 clears hold %i" },
      // A title held in a variable cannot be read without running the file.
      { file: "test/holds.fixture.ts", line: 23, kind: "expression", text: "computed" },
    ]);
  });

  it("read a range of REQs as each one in it, and leave other specs' REQs out", () => {
    expect(reqsNamed("REQ-10 to REQ-12 levels, and REQ-4")).toEqual([4, 10, 11, 12]);
    expect(reqsNamed("SPEC-0029 REQ-21, not SPEC-0013 REQ-5")).toEqual([21]);
  });

  it("pass a whole map, its quotes matched across line breaks and template substitutions", () => {
    expect(mapProblems(fixture("docs/requirements.md"))).toEqual({
      coverage: [],
      sections: [],
      citations: [],
      testNames: [],
      beyondSpec: [],
      titles: [],
    });
  });

  it("fail a broken map, naming each problem and where it is", () => {
    expect(mapProblems(fixture("docs/broken.md"))).toEqual({
      coverage: [
        'docs/broken.md: REQ-3 has no section "### REQ-3: …"',
        "docs/broken.md: REQ-3 has no row in the summary table",
        "docs/broken.md: maps REQ-4, which the spec does not have",
      ],
      sections: [
        "docs/broken.md:18: REQ-2 does not say what it asks (- **Asks.** …)",
        "docs/broken.md:18: REQ-2 cites no test that shows it (- **Tests.** `test/…`)",
      ],
      citations: [
        "docs/broken.md:13: cites src/core/hold.ts, which does not exist",
        "docs/broken.md:18: cites gone.ts in src/shell/cli/, which does not exist",
        "docs/broken.md:19: links to ../test/gone.fixture.ts, which does not exist",
      ],
      testNames: [
        'docs/broken.md:14: quotes "places two holds", which is no test title in test/holds.fixture.ts',
        'docs/broken.md:19: quotes "REQ-2 clears hold %i" before naming its test file',
      ],
      beyondSpec: ['docs/broken.md:30: a bullet under "Beyond SPEC-0029" is not marked **Beyond spec**'],
      titles: [
        'test/holds.fixture.ts:13: the title "REQ-2 to REQ-3: releases after {…} ticks" names REQ-3, which docs/broken.md does not map',
      ],
    });
  });
});
