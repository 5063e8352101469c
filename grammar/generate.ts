/** Writes the generated grammar artifacts next to this file. */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedArtifacts } from "./artifacts.js";

const here = dirname(fileURLToPath(import.meta.url));
for (const [name, text] of Object.entries(generatedArtifacts())) {
  writeFileSync(join(here, name), text);
  console.log(`wrote grammar/${name}`);
}
