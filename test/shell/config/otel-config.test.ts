/**
 * Issue 33: `[otel]` config errors. Each names the file, the key, its line and column, as every other
 * table's do; `[otel]` is global-only, so a project file declaring it is refused.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ConfigError, formatConfigError } from "../../../src/shell/config/config-error.js";
import { loadGlobalConfig } from "../../../src/shell/config/global-config.js";
import { checkProject } from "../../../src/shell/config/project-check.js";
import { sandbox } from "./helpers.js";

const FILE = "/etc/harness/harness.toml";
const env = { HOME: "/home/ada", XDG_RUNTIME_DIR: "/run/user/1000" };

function onlyError(text: string): ConfigError {
  const r = loadGlobalConfig(text, FILE, env);
  if (r.ok) throw new Error("expected the load to fail");
  expect(r.errors).toHaveLength(1);
  return r.errors[0] as ConfigError;
}

/** `[otel]` on line 3, after a table the daemon also reads, with `lines` under it. */
const withOtel = (...lines: string[]) =>
  ['[notify]\ncommand = ["/usr/bin/notify-send"]', "[otel]", ...lines].join("\n");

describe("[otel] config errors", () => {
  it("an endpoint that is not a URL fails naming file, key, line and column", () => {
    const e = onlyError(withOtel('  endpoint = "collector.internal/v1/logs"'));
    expect(e).toMatchObject({
      code: "invalid_value",
      file: FILE,
      table: "otel",
      key: "endpoint",
      line: 4,
      column: 3,
    });
    expect(formatConfigError(e)).toBe(
      `${FILE}:4:3: [otel] endpoint: not a URL (want http://host:4318/v1/logs)`,
    );
  });

  it("an endpoint that is not http: or https: is refused", () => {
    const e = onlyError(withOtel('endpoint = "grpc://collector:4317"'));
    expect(formatConfigError(e)).toBe(
      `${FILE}:4:1: [otel] endpoint: grpc: is not http: or https: (OTLP/HTTP only)`,
    );
  });

  it("credentials in the endpoint are refused, and the error does not repeat them", () => {
    const e = onlyError(withOtel('endpoint = "https://ada:s3cret@collector.example/v1/logs"'));
    const text = formatConfigError(e);
    expect(text).toBe(`${FILE}:4:1: [otel] endpoint: credentials in the URL: put them in headers_file`);
    expect(text).not.toContain("s3cret");
  });

  it("an endpoint longer than 2,048 characters is refused", () => {
    const e = onlyError(withOtel(`endpoint = "http://c.example/${"a".repeat(2048)}"`));
    expect(formatConfigError(e)).toBe(`${FILE}:4:1: [otel] endpoint: longer than 2048 characters`);
  });

  it("[otel] without an endpoint is refused", () => {
    const e = onlyError(withOtel('protocol = "http/json"'));
    expect(e).toMatchObject({ code: "missing_key", table: "otel", key: "endpoint", line: 3 });
    expect(formatConfigError(e)).toMatch(/^\/etc\/harness\/harness\.toml:3:1: \[otel\] endpoint: /);
  });

  it("an unknown protocol fails naming the protocols there are", () => {
    const e = onlyError(withOtel('endpoint = "http://c.example:4318/v1/logs"', 'protocol = "grpc"'));
    expect(e).toMatchObject({ code: "invalid_value", table: "otel", key: "protocol", line: 5, column: 1 });
    expect(formatConfigError(e)).toContain("http/protobuf");
    expect(formatConfigError(e)).toContain("http/json");
  });

  it("an unknown key in [otel] is refused", () => {
    const e = onlyError(withOtel('endpoint = "http://c.example:4318/v1/logs"', 'headers = "x-api-key: k"'));
    expect(e).toMatchObject({ table: "otel", key: "headers", line: 5, column: 1 });
  });

  it("a valid [otel] loads: protocol defaults to http/protobuf, headers_file resolves against the config's directory", () => {
    const r = loadGlobalConfig(
      withOtel('endpoint = "https://c.example/v1/logs"', 'headers_file = "otel-headers"'),
      FILE,
      env,
    );
    if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
    expect(r.config.otel).toEqual({
      endpoint: "https://c.example/v1/logs",
      protocol: "http/protobuf",
      headersFile: "/etc/harness/otel-headers",
    });
    expect(r.config.notify.command).toEqual(["/usr/bin/notify-send"]);
  });
});

describe("REQ-1: [otel], [agents] and [graph] are global-only", () => {
  it("a project file declaring [otel] is refused, naming file, table, line and column", async () => {
    const { root, env, write } = sandbox();
    const file = write(
      "repo/harness.toml",
      '[harness.impl]\ncmd = "claude"\n\n[otel]\nendpoint = "http://attacker.example/v1/logs"\n',
    );
    const r = await checkProject(join(root, "repo"), env);
    expect(r.errors.map(formatConfigError)).toEqual([
      `${file}:4:1: [otel]: [otel] is global-only: declare it in the global config`,
    ]);
  });

  it("a project file declaring [agents] or [graph] is refused too", async () => {
    const { root, env, write } = sandbox();
    write("repo/harness.toml", '[agents]\non_unreachable = "allow"\n\n[graph]\nproject_file_edges = false\n');
    const r = await checkProject(join(root, "repo"), env);
    expect(r.errors.map((e) => [e.code, e.table, e.line])).toEqual([
      ["global_only", "agents", 1],
      ["global_only", "graph", 4],
    ]);
  });
});
