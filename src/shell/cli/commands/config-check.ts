/**
 * `harness config check [DIR] [--config PATH] [--json]`: loads the global config, then checks the
 * project `harness.toml` above DIR and the `harness_d` drop-ins for global-only tables. The supervisor's
 * `harness up` calls it. Exit 0 when all is well, 1 when a file has errors, 2 when one cannot be read.
 */
import { type ConfigError, formatConfigError } from "../../config/config-error.js";
import { readGlobalConfig } from "../../config/global-config.js";
import { globalConfigPath } from "../../config/paths.js";
import { checkProject } from "../../config/project-check.js";
import type { Io } from "../io.js";

export interface ConfigCheckOptions {
  /** The global config; default: `$XDG_CONFIG_HOME/harness/harness.toml`, where absence means defaults. */
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
}

/** `dir`: where the walk up for the project file starts; default: the working directory. */
export async function runConfigCheck(
  dir: string | undefined,
  options: ConfigCheckOptions,
  io: Io,
): Promise<number> {
  const configFile = options.config ?? globalConfigPath(io.env);
  const global = await readGlobalConfig(configFile, io.env, { required: options.config !== undefined });
  const project = await checkProject(dir ?? process.cwd(), io.env, {
    harnessD: global.ok ? global.config.server.harnessD : undefined,
    globalConfig: configFile,
  });
  const errors: ConfigError[] = [...(global.ok ? [] : global.errors), ...project.errors];
  const warnings = global.ok ? global.warnings : [];
  const ok = errors.length === 0;

  if (options.json === true) {
    io.out(
      JSON.stringify({
        ok,
        globalConfig: configFile,
        projectFile: project.projectFile ?? null,
        dropIns: project.dropIns,
        errors,
        warnings,
      }),
    );
  } else {
    for (const e of errors) io.out(formatConfigError(e));
    for (const w of warnings) io.out(`warning: ${formatConfigError(w)}`);
    if (ok) {
      io.out(`ok: global config ${configFile}${global.found ? "" : " (not found: defaults)"}`);
      io.out(
        project.projectFile === undefined
          ? "ok: no project harness.toml"
          : `ok: project ${project.projectFile}`,
      );
      if (project.dropIns.length > 0) io.out(`ok: ${project.dropIns.length} drop-in(s)`);
    }
  }
  if (errors.some((e) => e.code === "read")) return 2;
  return ok ? 0 : 1;
}
