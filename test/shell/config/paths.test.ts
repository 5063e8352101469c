import { describe, expect, it } from "vitest";
import {
  controlTokenPath,
  globalConfigPath,
  policyClonePath,
  socketPath,
  storePath,
} from "../../../src/shell/config/paths.js";

const system = () => ({ home: "/home/fallback", uid: 1234 });

describe("default paths", () => {
  it("follow the XDG variables", () => {
    const env = { XDG_CONFIG_HOME: "/x/config", XDG_STATE_HOME: "/x/state", XDG_RUNTIME_DIR: "/x/run" };
    expect(globalConfigPath(env, system)).toBe("/x/config/harness/harness.toml");
    expect(storePath(env, system)).toBe("/x/state/harness/harness.db");
    expect(policyClonePath(env, "ops", system)).toBe("/x/state/harness/policy/ops");
    expect(socketPath(env, system)).toBe("/x/run/harness.sock");
    expect(controlTokenPath(env, system)).toBe("/x/config/harness/control.token");
  });

  it("fall back to $HOME and /tmp/harness-<uid>", () => {
    const env = { HOME: "/home/ada" };
    expect(globalConfigPath(env, system)).toBe("/home/ada/.config/harness/harness.toml");
    expect(storePath(env, system)).toBe("/home/ada/.local/state/harness/harness.db");
    expect(socketPath(env, system)).toBe("/tmp/harness-1234/harness.sock");
  });

  it("ignore empty and relative values, as the XDG spec says", () => {
    const env = { HOME: "", XDG_CONFIG_HOME: "relative", XDG_RUNTIME_DIR: "" };
    expect(globalConfigPath(env, system)).toBe("/home/fallback/.config/harness/harness.toml");
    expect(socketPath(env, system)).toBe("/tmp/harness-1234/harness.sock");
  });
});
