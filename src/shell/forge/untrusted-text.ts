/**
 * Text a rule miner wrote (a rationale, a description, a message, an evidence id, a run id), made inert
 * for a pull request body (SPEC-0029 REQ-16): HTML comments (which could forge the marker or hide text
 * from the reviewer) and bidi and zero-width controls (which make shown text differ from what it is)
 * are removed; `@mentions` (everywhere) and `#refs` (outside code fences) are neutralised with their fullwidth look-alikes, so the forge
 * pings no one and links nothing; and the result is fenced with a backtick run longer than any inside
 * it, so no Markdown, HTML or autolink in it is rendered at all. The fence alone would stop most of
 * this; the rest is for the places (titles, notifications, e-mail) a forge shows text unrendered.
 */

// Every control but tab and newline; bidi embeddings, overrides, isolates and marks; zero-width and
// other invisible format characters; line and paragraph separators; unpaired surrogates.
const INVISIBLE =
  /(?![\t\n])[\p{Cc}\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\p{Surrogate}/gu;

/** `<!-- … -->`, and a comment left open to the end. */
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/**
 * `refs: false` keeps `#` and `GH-` as they are: inside a code fence a forge links nothing, and a
 * reviewer copies `docs-bot#1` into a query as it was written.
 */
export function neutralise(text: string, { refs = true }: { readonly refs?: boolean } = {}): string {
  let out = text.replace(INVISIBLE, "");
  // Removing one comment, or a stray `-->`, can join the pieces of a new one: repeat until none is left.
  for (let before = ""; before !== out; ) {
    before = out;
    out = out.replace(HTML_COMMENT, "");
    if (out === before) out = out.replace(/-->/g, "");
  }
  // @user, @org/team: the fullwidth at sign mentions no one (a notification e-mail shows the raw text).
  out = out.replace(/@(?=[\p{L}\p{N}_-])/gu, "\uff20");
  if (!refs) return out;
  // #1, org/repo#1, GH-1: the fullwidth number sign and a non-breaking hyphen link nothing.
  return out.replace(/#(?=\d)/g, "\uff03").replace(/\bGH-(?=\d)/gi, (m) => `${m.slice(0, 2)}\u2011`);
}

/** The longest run of backticks in `text`. */
function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/** `text`, neutralised, inside a fence no line of it can close; `info` names the fence's content. */
export function fenced(text: string, info = "text"): string {
  const body = neutralise(text, { refs: false });
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1));
  return `${fence}${info}\n${body}\n${fence}`;
}

/** One line of untrusted text inside a code span, for a table cell or a sentence. */
export function inline(text: string): string {
  const body = neutralise(text).replace(/\s+/g, " ").trim();
  const ticks = "`".repeat(longestBacktickRun(body) + 1);
  const pad = body.startsWith("`") || body.endsWith("`") ? " " : "";
  return `${ticks}${pad}${body}${pad}${ticks}`;
}
