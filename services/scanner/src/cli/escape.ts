// What the CLI prints for people is text from the server (names, ids, error messages): a
// character in it that controls the terminal (ESC, CR, the C1 CSI, a bidirectional override)
// could move the cursor, erase lines or reorder what the operator reads. Pure.

/** C0 controls, DEL, C1 controls, and the bidirectional marks and overrides. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** The same, less the newline: the CLI's own line breaks in a whole block of output. */
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

const escape = (c: string) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`;

/** One value (a cell, a name, a message): every control character as a visible \uXXXX, newlines too. */
export function escapeValue(text: string): string {
  return text.replace(CONTROLS, escape);
}

/** A block of output: every control character visible except the line breaks between its lines. */
export function escapeText(text: string): string {
  return text.replace(CONTROLS_BUT_NEWLINE, escape);
}

/**
 * Text with the credentials of every URL in it replaced: `https://user:secret@host/x` →
 * `https://***@host/x` (up to the last `@` before the host, as a URL parser reads it). For every
 * URL the CLI echoes, including inside fetch's own error messages; requests use the URL as given.
 */
export function redactUrl(text: string): string {
  // One pass, no regular expression (the obvious one backtracks polynomially on hostile text).
  let out = '';
  let from = 0;
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', from)) {
    const start = at + 3;
    let end = start;
    while (end < text.length && !AUTHORITY_END.has(text[end]!)) end++;
    const userinfo = text.lastIndexOf('@', end - 1);
    out += userinfo >= start ? `${text.slice(from, start)}***${text.slice(userinfo, end)}` : text.slice(from, end);
    from = end;
  }
  return out + text.slice(from);
}

/** What ends a URL's authority (where credentials would be): the path, query, fragment, or blank. */
const AUTHORITY_END = new Set(['/', '?', '#', ' ', '\t', '\n', '\r', '"', "'", ')', '>']);
