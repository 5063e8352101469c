/** Text made one word for a POSIX shell, for the commands the CLI writes or prints for an operator. */

const SAFE = /^[A-Za-z0-9_./:=@%+-]+$/;

/** One word for a POSIX shell: as it is when plain, else single-quoted, an inner `'` written `'\''`. */
export const shellWord = (s: string): string => (SAFE.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/** One word as `shellWord` writes it: plain, or single-quoted with `'\''` for an inner quote. */
const WORD = /[A-Za-z0-9_./:=@%+-]+|'(?:[^']|'\\'')*'/y;

/**
 * The words of a command `shellWord` wrote, joined by single spaces; undefined for any other text (a
 * command someone wrote by hand is not read as ours).
 */
export function shellWords(command: string): string[] | undefined {
  const words: string[] = [];
  let at = 0;
  while (at < command.length) {
    if (words.length > 0) {
      if (command[at] !== " ") return undefined;
      at++;
    }
    WORD.lastIndex = at;
    const m = WORD.exec(command);
    if (m === null) return undefined;
    const w = m[0];
    words.push(w.startsWith("'") ? w.slice(1, -1).replaceAll("'\\''", "'") : w);
    at = WORD.lastIndex;
  }
  return words;
}
