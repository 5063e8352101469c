#!/usr/bin/env node
/** The `harness` command line. Each command's work lives in its own module; this file only wires them. */
import { cac } from "cac";
import { celParseCommand } from "./cel-command.js";
import { packageVersion } from "./version.js";

const cli = cac("harness");

// cac has no nested commands, so each group (`cel`, later `rules`, `policy`…) takes its verb as an argument.
cli
  .command("cel <verb> <expr>", "CEL tools. Verbs: parse (print the canonical form, or the errors)")
  .option("--json", "Print the result as JSON")
  .example(`harness cel parse 'event.type == "tool" && event.is_error'`)
  .action((verb: string, expr: string, options: { json?: boolean }) => {
    if (verb !== "parse") {
      process.stderr.write(`harness cel: unknown verb '${verb}' (expected: parse)\n`);
      process.exitCode = 2;
      return;
    }
    const out = celParseCommand(expr, options.json === true);
    if (out.stdout !== "") process.stdout.write(`${out.stdout}\n`);
    if (out.stderr !== "") process.stderr.write(`${out.stderr}\n`);
    process.exitCode = out.exitCode;
  });

cli.help();
cli.version(packageVersion());

try {
  cli.parse(process.argv, { run: false });
  if (cli.matchedCommand !== undefined) {
    await cli.runMatchedCommand();
  } else if (!cli.options.help && !cli.options.version) {
    if (cli.args.length > 0) {
      process.stderr.write(`harness: unknown command '${cli.args[0]}'\n`);
      process.exitCode = 2;
    }
    cli.outputHelp();
  }
} catch (e) {
  // cac reports missing arguments and unknown options by throwing.
  process.stderr.write(`harness: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
