// Problem paths in the notation of kubectl's and the API server's field errors:
// `spec.templates[2].metadata.labels["furnish.dev/template"]`.

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The path of `key` (an object key or an array index) under `base` (`''` is the root). */
export function childPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (!PLAIN_KEY.test(key)) return `${base}[${JSON.stringify(key)}]`;
  return base === '' ? key : `${base}.${key}`;
}

/** How a problem about the whole document is located. */
export const ROOT_PATH = '(root)';
