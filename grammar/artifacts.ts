/**
 * The artifacts generated from the parser: railroad diagrams of its rules. Shared by `generate.ts`, which
 * writes them, and the test that fails when the checked-in copies are stale.
 */
import { createSyntaxDiagramsCode } from "chevrotain";
import { CelGrammar } from "../src/cel/parser/grammar.js";

export function generatedArtifacts(): { "diagrams.html": string } {
  const grammar = new CelGrammar(true);
  return { "diagrams.html": createSyntaxDiagramsCode(grammar.getSerializedGastProductions()) };
}

/** The names of the parser's rules, in definition order. */
export function ruleNames(): string[] {
  return Object.keys(new CelGrammar(true).getGAstProductions());
}
