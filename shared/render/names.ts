// Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation), with its error messages so
// that a problem reads the same as the API server's refusal would. Each check returns the list
// of messages, empty when the value is valid (one shared frozen array: no allocation on success).

const NONE: readonly string[] = Object.freeze([]);

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const LABEL_VALUE_MAX = 63;

function tooLong(value: string, max: number): string | undefined {
  return value.length > max ? `must be no more than ${max} characters` : undefined;
}

function check(value: string, max: number, pattern: RegExp, patternMessage: string): readonly string[] {
  const long = tooLong(value, max);
  const bad = pattern.test(value) ? undefined : patternMessage;
  if (long === undefined && bad === undefined) return NONE;
  return [long, bad].filter((m): m is string => m !== undefined);
}

/** Namespace names, and names of a few kinds (IsDNS1123Label). */
export function dns1123LabelErrors(value: string): readonly string[] {
  return check(
    value,
    DNS1123_LABEL_MAX,
    DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
  );
}

/** Names of most kinds (IsDNS1123Subdomain); `max` for names that must also fit elsewhere. */
export function dns1123SubdomainErrors(value: string, max = DNS1123_SUBDOMAIN_MAX): readonly string[] {
  return check(
    value,
    max,
    DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
  );
}

/** Service names (IsDNS1035Label). */
export function dns1035LabelErrors(value: string): readonly string[] {
  return check(
    value,
    DNS1123_LABEL_MAX,
    DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123')",
  );
}

/** RBAC object names (ValidatePathSegmentName): anything a URL path segment can carry. */
export function pathSegmentNameErrors(value: string): readonly string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  if (value.includes('/')) return ["may not contain '/'"];
  if (value.includes('%')) return ["may not contain '%'"];
  return NONE;
}

/** Label and annotation keys: `[prefix/]name` (IsQualifiedName). */
export function qualifiedNameErrors(value: string): readonly string[] {
  const parts = value.split('/');
  if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  const errors: string[] = [];
  if (prefix !== undefined) {
    if (prefix === '') errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === '') errors.push('name part must be non-empty');
  else {
    const long = tooLong(name, DNS1123_LABEL_MAX);
    if (long) errors.push(`name part ${long}`);
    if (!QUALIFIED_NAME_PART.test(name)) {
      errors.push(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')",
      );
    }
  }
  return errors.length === 0 ? NONE : errors;
}

/** Label values (IsValidLabelValue): empty, or up to 63 characters of a restricted set. */
export function labelValueErrors(value: string): readonly string[] {
  if (value === '') return NONE;
  return check(
    value,
    LABEL_VALUE_MAX,
    QUALIFIED_NAME_PART,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
  );
}
