// Label and field selectors in their query-string form, as the API server parses them:
// labelSelector "a=b,c!=d,e in (x,y),f notin (z),g,!h"; fieldSelector "metadata.name=x,spec.nodeName!=y".

type Labels = Record<string, string> | undefined;
export type Matcher = (object: Record<string, unknown>) => boolean;

export class SelectorError extends Error {}

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function labelTerm(term: string): (labels: Labels) => boolean {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const [, key, op, list] = set;
    const values = list!.split(',').map((v) => v.trim());
    return op === 'in'
      ? (l) => l?.[key!] !== undefined && values.includes(l[key!]!)
      : (l) => l?.[key!] === undefined || !values.includes(l[key!]!);
  }
  const neq = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(term);
  if (neq) return (l) => l?.[neq[1]!] !== neq[2];
  const eq = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(term);
  if (eq) return (l) => l?.[eq[1]!] === eq[2];
  const notExists = /^!\s*([^!=\s]+)$/.exec(term);
  if (notExists) return (l) => l?.[notExists[1]!] === undefined;
  if (/^[A-Za-z0-9._/-]+$/.test(term)) return (l) => l?.[term] !== undefined;
  throw new SelectorError(`unable to parse requirement: "${term}"`);
}

export function parseLabelSelector(text: string | null): Matcher {
  if (!text) return () => true;
  const terms = splitTerms(text).map(labelTerm);
  return (object) => {
    const labels = (object['metadata'] as { labels?: Record<string, string> } | undefined)?.labels;
    return terms.every((t) => t(labels));
  };
}

/** Fields the server can select on, for every resource (the real server has a per-kind list). */
export const SELECTABLE_FIELDS: Readonly<Record<string, (o: Record<string, unknown>) => string>> = {
  'metadata.name': (o) => (o['metadata'] as { name?: string } | undefined)?.name ?? '',
  'metadata.namespace': (o) => (o['metadata'] as { namespace?: string } | undefined)?.namespace ?? '',
  'spec.nodeName': (o) => (o['spec'] as { nodeName?: string } | undefined)?.nodeName ?? '',
  'status.phase': (o) => (o['status'] as { phase?: string } | undefined)?.phase ?? '',
};

export function parseFieldSelector(text: string | null): Matcher {
  if (!text) return () => true;
  const terms = splitTerms(text).map((term) => {
    const m = /^([^!=]+?)\s*(==|!=|=)\s*(.*)$/.exec(term);
    if (!m) throw new SelectorError(`invalid field selector term "${term}"`);
    const [, field, op, value] = m;
    const get = SELECTABLE_FIELDS[field!];
    if (!get) throw new SelectorError(`field label not supported: ${field}`);
    return op === '!='
      ? (o: Record<string, unknown>) => get(o) !== value
      : (o: Record<string, unknown>) => get(o) === value;
  });
  return (object) => terms.every((t) => t(object));
}
