/**
 * The forge module's pure parts: which HTTPS address a remote is pushed over (an ssh remote over the
 * same repository's HTTPS address, REQ-16), and untrusted text made inert for a pull request body.
 */
import { describe, expect, it } from "vitest";
import { ForgeRemoteError, forgeRemote } from "../../../src/shell/forge/remote.js";
import { fenced, inline, neutralise } from "../../../src/shell/forge/untrusted-text.js";

describe("forgeRemote", () => {
  it.each([
    ["https://github.com/org/policy.git", "github.com", "https://github.com/org/policy.git"],
    [
      "https://forge.example:3000/org/policy",
      "forge.example:3000",
      "https://forge.example:3000/org/policy.git",
    ],
    ["git@github.com:org/policy.git", "github.com", "https://github.com/org/policy.git"],
    ["ssh://git@forge.example:2222/org/policy.git", "forge.example", "https://forge.example/org/policy.git"],
    ["git+ssh://forge.example/org/policy", "forge.example", "https://forge.example/org/policy.git"],
  ])("pushes %s over the HTTPS address of the same repository", (remote, host, https) => {
    expect(forgeRemote(remote)).toMatchObject({ host, owner: "org", repo: "policy", httpsUrl: https });
  });

  it.each([
    ["/srv/git/policy.git", /local path/],
    ["file:///srv/git/policy.git", /file:\/\/ remote is not on a forge/],
    ["git://forge.example/org/policy.git", /git:\/\/ remote/],
    ["https://forge.example/org/sub/policy.git", /<owner>\/<repo>/],
    ["https://forge.example/org/..", /<owner>\/<repo>/],
  ])("refuses %s: it names no repository on a forge", (remote, why) => {
    expect(() => forgeRemote(remote)).toThrow(ForgeRemoteError);
    expect(() => forgeRemote(remote)).toThrow(why);
  });

  it("never keeps userinfo in the address it pushes to", () => {
    expect(forgeRemote("https://user:secret@forge.example/org/policy.git").httpsUrl).toBe(
      "https://forge.example/org/policy.git",
    );
  });
});

describe("untrusted text", () => {
  it("removes HTML comments, even one rebuilt by removing another, and one left open", () => {
    expect(neutralise("a<!-- x -->b")).toBe("ab");
    expect(neutralise("<!<!-- -->-- hidden -->shown")).toBe("shown");
    expect(neutralise("before <!-- never closed")).toBe("before ");
    expect(neutralise("<-->!-- made by removing a stray end")).toBe("");
    expect(neutralise("a --> b")).toBe("a  b");
  });

  it("removes bidi and zero-width controls and keeps tabs and newlines", () => {
    expect(neutralise("a\u202eb\u2066c\u2069\u200bd\ufeffe\tf\ng\u0007")).toBe("abcde\tf\ng");
  });

  it("neutralises @mentions, #refs and GH- refs so the forge pings and links no one", () => {
    expect(neutralise("@org/team @alice x@y fixes #12, org/repo#3 and GH-4; # heading")).toBe(
      "\uff20org/team \uff20alice x\uff20y fixes \uff0312, org/repo\uff033 and GH\u20114; # heading",
    );
  });

  it("fences with a backtick run longer than any inside", () => {
    expect(fenced("a ``` b")).toBe("````text\na ``` b\n````");
    expect(fenced("plain")).toBe("```text\nplain\n```");
    expect(fenced("`````")).toBe("``````text\n`````\n``````");
  });

  it("puts one line in a code span that its own backticks cannot close", () => {
    expect(inline("a `b` c")).toBe("``a `b` c``");
    expect(inline("`x")).toBe("`` `x ``");
  });
});
