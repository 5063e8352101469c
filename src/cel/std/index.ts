/** CEL's standard environment: every function of the language definition, as one overload table. */
import type { FunctionDecl } from "../env.js";
import { conversions } from "./conversions.js";
import { operators } from "./operators.js";
import { regexFunctions } from "./regex.js";
import { strings } from "./strings.js";
import { timeFunctions } from "./time-functions.js";

export const standardFunctions: readonly FunctionDecl[] = [
  ...operators,
  ...strings,
  ...regexFunctions,
  ...conversions,
  ...timeFunctions,
];
