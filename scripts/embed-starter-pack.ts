/**
 * Writes `src/core/starter-pack.generated.ts` from `starter-rules/*.toml`, so the starter pack is
 * embedded in the build (REQ-14) rather than read from disk. A test fails when the two disagree.
 */
import { writeFileSync } from "node:fs";
import { starterPackModule } from "./starter-pack-source.js";

writeFileSync(new URL("../src/core/starter-pack.generated.ts", import.meta.url), starterPackModule());
console.log("wrote src/core/starter-pack.generated.ts");
