/** Text made one word for a POSIX shell, for the commands the CLI writes or prints for an operator. */

const SAFE = /^[A-Za-z0-9_./:=@%+-]+$/;

/** One word for a POSIX shell: as it is when plain, else single-quoted, an inner `'` written `'\''`. */
export const shellWord = (s: string): string => (SAFE.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
