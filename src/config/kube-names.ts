// Kubernetes name grammars for settings that name cluster objects, checked while the flags and
// environment are read: a namespace or taint key the API server could never hold would leave a
// controller silently doing nothing, so it exits 2 with the reason instead.

/** A DNS-1123 label (a namespace name) is at most this long. */
export const DNS1123_LABEL_MAX = 63;
/** A DNS-1123 subdomain (a qualified name's prefix) is at most this long. */
export const DNS1123_SUBDOMAIN_MAX = 253;
/** The name part of a qualified name (a label or taint key) is at most this long. */
export const QUALIFIED_NAME_MAX = 63;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Why `v` cannot be a namespace name, or undefined when it can. */
export function namespaceNameProblem(v: string): string | undefined {
  if (v.length > DNS1123_LABEL_MAX) return `"${v}" is longer than ${DNS1123_LABEL_MAX} characters`;
  if (!DNS1123_LABEL.test(v))
    return `"${v}" is not a namespace name (lower-case letters, digits and '-', starting and ending with a letter or digit)`;
  return undefined;
}

/** Why `v` cannot be a taint key ([prefix/]name, as a label key), or undefined when it can. */
export function taintKeyProblem(v: string): string | undefined {
  const slash = v.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : v.slice(0, slash);
  const name = slash < 0 ? v : v.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > DNS1123_SUBDOMAIN_MAX || !DNS1123_SUBDOMAIN.test(prefix)))
    return `"${v}" is not a taint key: the prefix "${prefix}" must be a DNS subdomain (e.g. cni.istio.io)`;
  if (name.length > QUALIFIED_NAME_MAX)
    return `"${v}" is not a taint key: the name after the prefix is longer than ${QUALIFIED_NAME_MAX} characters`;
  if (!QUALIFIED_NAME_PART.test(name))
    return `"${v}" is not a taint key: the name must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  return undefined;
}

/** Why `v` cannot be a ConfigMap name (a DNS-1123 subdomain), or undefined when it can. */
export function configMapNameProblem(v: string): string | undefined {
  if (v.length > DNS1123_SUBDOMAIN_MAX) return `"${v}" is longer than ${DNS1123_SUBDOMAIN_MAX} characters`;
  if (!DNS1123_SUBDOMAIN.test(v))
    return `"${v}" is not a ConfigMap name (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)`;
  return undefined;
}
