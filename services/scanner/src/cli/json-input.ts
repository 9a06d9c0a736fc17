// JSON from a file or an argument that may hold a secret by mistake (`--file .state-relay/api-token`):
// V8's parse errors quote the input's start, so a syntax error is located here and described
// in words, by line and column, never quoting the text.

/** Where and why `text` stops being JSON; undefined when it is JSON. One pass, no recursion. */
export function jsonSyntaxError(text: string): { offset: number; reason: string } | undefined {
  const open: string[] = []; // '{' or '[' per enclosing container
  let i = 0;
  const blanks = () => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const at = (reason: string) => ({ offset: i, reason });

  for (;;) {
    // A value is expected at i.
    blanks();
    const c = text.charAt(i);
    if (c === '') return at('the input ends where a value is expected');
    if (c === '{' || c === '[') {
      i++;
      blanks();
      if (text.charAt(i) === (c === '{' ? '}' : ']')) i++;
      else {
        open.push(c);
        if (c === '{') {
          const problem = readKey();
          if (problem) return problem;
        }
        continue;
      }
    } else {
      const problem = c === '"' ? readString() : readScalar();
      if (problem) return problem;
    }
    // After a value: a separator, a closing bracket, or the end.
    for (;;) {
      blanks();
      const top = open.at(-1);
      const next = text.charAt(i);
      if (top === undefined) return next === '' ? undefined : at('unexpected text after the JSON value');
      if (next === ',') {
        i++;
        if (top === '{') {
          blanks();
          const problem = readKey();
          if (problem) return problem;
        }
        break;
      }
      if (next === (top === '{' ? '}' : ']')) {
        open.pop();
        i++;
        continue;
      }
      return at(`expected "," or "${top === '{' ? '}' : ']'}"`);
    }
  }

  function readKey() {
    if (text.charAt(i) !== '"') return at('expected a property name in double quotes');
    const problem = readString();
    if (problem) return problem;
    blanks();
    if (text.charAt(i) !== ':') return at('expected ":" after a property name');
    i++;
    return undefined;
  }

  function readString() {
    for (i++; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x22) {
        i++;
        return undefined;
      }
      if (code < 0x20) return at('a control character inside a string');
      if (code === 0x5c) {
        i++;
        const e = text.charAt(i);
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (!isHex(text.charCodeAt(i + k))) return { offset: i + k, reason: 'a bad \\u escape in a string' };
          }
          i += 4;
        } else if (e === '' || !'"\\/bfnrt'.includes(e)) return at('a bad escape in a string');
      }
    }
    return at('a string that is never closed');
  }

  function readScalar() {
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return undefined;
      }
    }
    const start = i;
    if (text.charAt(i) === '-') i++;
    if (text.charAt(i) === '0') i++;
    else if (!digits()) return { offset: start, reason: 'expected a JSON value' };
    if (text.charAt(i) === '.') {
      i++;
      if (!digits()) return at('expected a digit after the decimal point');
    }
    if (text.charAt(i) === 'e' || text.charAt(i) === 'E') {
      i++;
      if (text.charAt(i) === '+' || text.charAt(i) === '-') i++;
      if (!digits()) return at('expected a digit in the exponent');
    }
    return undefined;
  }

  function digits(): boolean {
    const start = i;
    while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i > start;
  }
}

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** Line and column (both from 1) of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * JSON.parse, with a syntax error described as "not valid JSON at line L, column C: <reason>",
 * never quoting the input. `Error` is thrown with that message for the caller to prefix.
 */
export function parseJsonQuietly(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const found = jsonSyntaxError(text);
    if (found === undefined) throw new Error('not valid JSON');
    const { line, column } = lineAndColumn(text, found.offset);
    throw new Error(`not valid JSON at line ${line}, column ${column}: ${found.reason}`);
  }
}
