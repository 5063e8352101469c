/**
 * The forge module's pure parts: which HTTPS address a remote is pushed over (an ssh remote over the
 * same repository's HTTPS address, REQ-16), and untrusted text made inert for a pull request body.
 */
import fc from "fast-check";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { remoteProblem } from "../../../src/shell/config/git-refs.js";
import { pushRefusal } from "../../../src/shell/forge/proposal-clone.js";
import { ForgeRemoteError, forgeRemote } from "../../../src/shell/forge/remote.js";
import { reviewableRuleFile } from "../../../src/shell/forge/rule-file-text.js";
import { fenced, inline, neutralise } from "../../../src/shell/forge/untrusted-text.js";
import { renderRuleFile } from "../../../src/shell/proposals/propose-rule.js";
import { runs } from "../../property-runs.js";
import { ruleOf } from "./propose-fixture.js";

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
    ["https://forge.example/policy.git", /<owner>\/<repo>/],
    [`https://forge.example/${"g/".repeat(22)}policy.git`, /<owner>\/<repo>/],
    ["https://forge.example/org/..", /<owner>\/<repo>/],
  ])("refuses %s: it names no repository on a forge", (remote, why) => {
    expect(() => forgeRemote(remote)).toThrow(ForgeRemoteError);
    expect(() => forgeRemote(remote)).toThrow(why);
  });

  it("takes a GitLab project in nested groups, its owner the group path", () => {
    expect(forgeRemote("git@gitlab.example:org/platform/rules/policy.git")).toMatchObject({
      host: "gitlab.example",
      owner: "org/platform/rules",
      repo: "policy",
      httpsUrl: "https://gitlab.example/org/platform/rules/policy.git",
    });
  });

  it.each([
    ["http://127.0.0.1:3000/org/policy.git", "127.0.0.1:3000", "http://127.0.0.1:3000/org/policy.git"],
    ["http://localhost/org/policy", "localhost", "http://localhost/org/policy.git"],
    ["http://[::1]:8080/org/policy.git", "[::1]:8080", "http://[::1]:8080/org/policy.git"],
  ])("serves %s over plain http: the host is this machine's loopback", (remote, host, url) => {
    expect(forgeRemote(remote)).toMatchObject({ host, origin: url.replace(/\/org\/policy\.git$/, "") });
    expect(forgeRemote(remote).httpsUrl).toBe(url);
    expect(remoteProblem(remote)).toBeUndefined();
  });

  it.each([
    "http://forge.example/org/policy.git",
    "http://127.0.0.2/org/policy.git",
    "http://10.0.0.1:3000/org/policy.git",
    "http://localhost.forge.example/org/policy.git",
    "http://127.0.0.1@forge.example/org/policy.git",
    "http://[::2]/org/policy.git",
  ])("refuses http to %s: the token would cross a network in clear", (remote) => {
    expect(() => forgeRemote(remote)).toThrow(/in clear/);
    expect(remoteProblem(remote)).toMatch(/scheme http/);
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

  it("Finding 9: inside a code fence # stays copyable (docs-bot#1), outside it is neutralised", () => {
    expect(fenced("evidence docs-bot#1 and GH-2 from @alice")).toBe(
      "```text\nevidence docs-bot#1 and GH-2 from \uff20alice\n```",
    );
    expect(inline("docs-bot#1")).toBe("`docs-bot\uff031`");
  });

  it("Finding 9: a stored when is committed as a TOML literal string where one can hold it, parsing to the same values", () => {
    const rendered = renderRuleFile({ ...ruleOf("x"), when: 'event.type == "closed"' } as never);
    expect(reviewableRuleFile(rendered)).toContain(`when = 'event.type == "closed"'\n`);
    const quote = renderRuleFile({ ...ruleOf("x"), when: `event.harness != "a'b"` } as never);
    expect(reviewableRuleFile(quote)).toContain(`when = '''\nevent.harness != "a'b"'''\n`);
    const both = renderRuleFile({ ...ruleOf("x"), when: `event.harness != "a'''b"\n` } as never);
    expect(reviewableRuleFile(both)).toBe(both);
    fc.assert(
      fc.property(fc.string(), (when) => {
        const text = renderRuleFile({ ...ruleOf("x"), when } as never);
        expect(parse(reviewableRuleFile(text))).toEqual(parse(text));
      }),
      { numRuns: runs(200) },
    );
  });

  it("Finding 5: a refused push keeps the remote: and [remote rejected] lines, bounded and without controls", () => {
    const stderr = [
      "remote: \u001b[31mno\u001b[0m \u202eway",
      "To https://forge/org/policy.git",
      " ! [remote rejected] abc -> harness-rules/x (pre-receive hook declined)",
      "error: failed to push some refs to 'https://forge/org/policy.git'",
    ].join("\n");
    expect(pushRefusal(stderr)).toBe(
      "remote: no way\n! [remote rejected] abc -> harness-rules/x (pre-receive hook declined)",
    );
    expect(pushRefusal("error: failed to push some refs")).toBeUndefined();
    const long = pushRefusal(Array.from({ length: 30 }, () => `remote: ${"x".repeat(300)}`).join("\n"));
    expect(long?.split("\n")).toHaveLength(21);
    expect(long?.split("\n")[0]).toHaveLength(200);
    expect(long?.endsWith("(10 more lines)")).toBe(true);
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
