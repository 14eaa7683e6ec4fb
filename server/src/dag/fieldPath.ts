// The `field` path grammar of Layer 2 §3, shared by the analysis (invalid-field-path) and the executor:
//   path  := "data" ( "." ident | "[" index "]" )*
//   ident := [A-Za-z_][A-Za-z0-9_]*      index := "0" | [1-9][0-9]*
export type FieldPathSegment = string | number;

export type FieldPathParse =
  | { readonly ok: true; readonly segments: readonly FieldPathSegment[] }
  | { readonly ok: false; readonly offset: number; readonly message: string };

const isIdentStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isIdentPart = (c: string): boolean => isIdentStart(c) || isDigit(c);

const fail = (offset: number, message: string): FieldPathParse => ({ ok: false, offset, message });

export function parseFieldPath(path: string): FieldPathParse {
  if (!path.startsWith('data') || (path.length > 4 && isIdentPart(path[4]!))) {
    return fail(0, 'a field path starts with `data` (the output payload), e.g. `data.chunks[0]`');
  }
  const segments: FieldPathSegment[] = ['data'];
  let i = 4;
  while (i < path.length) {
    const c = path[i]!;
    if (c === '.') {
      const start = ++i;
      if (i >= path.length || !isIdentStart(path[i]!)) {
        return fail(i, 'expected a member name after `.` (letters, digits and `_`, not starting with a digit)');
      }
      while (i < path.length && isIdentPart(path[i]!)) i++;
      segments.push(path.slice(start, i));
    } else if (c === '[') {
      const start = ++i;
      while (i < path.length && isDigit(path[i]!)) i++;
      if (i === start)
        return fail(
          start,
          'expected a non-negative integer index inside `[ ]` (wildcards, slices and filters are not supported)',
        );
      if (path[start] === '0' && i - start > 1) return fail(start, 'an index has no leading zeros');
      if (path[i] !== ']') return fail(i, 'expected `]` to close the index');
      segments.push(Number(path.slice(start, i)));
      i++;
    } else {
      return fail(i, `unexpected \`${c}\`: continue the path with \`.member\` or \`[index]\``);
    }
  }
  return { ok: true, segments };
}

export type FieldPathResolution =
  { readonly found: true; readonly value: unknown } | { readonly found: false; readonly at: string };

/** The value at `segments` inside `root`, reading own properties only (never the prototype chain). */
export function resolveFieldPath(root: unknown, segments: readonly FieldPathSegment[]): FieldPathResolution {
  let value: unknown = root;
  let walked = '';
  for (const segment of segments) {
    walked += typeof segment === 'number' ? `[${segment}]` : walked === '' ? segment : `.${segment}`;
    if (typeof segment === 'number') {
      if (!Array.isArray(value) || segment >= value.length) return { found: false, at: walked };
      value = value[segment];
    } else {
      if (
        value === null ||
        typeof value !== 'object' ||
        Array.isArray(value) ||
        !Object.prototype.hasOwnProperty.call(value, segment)
      ) {
        return { found: false, at: walked };
      }
      value = (value as Record<string, unknown>)[segment];
    }
  }
  return { found: true, value };
}
