// Booleans as Go's strconv.ParseBool reads them. istiod parses its env vars, the dry-run
// annotation and the ingress-use-waypoint label with it, so istiod-ts accepts exactly its spellings.

const TRUE_SPELLINGS: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_SPELLINGS: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** strconv.ParseBool: true or false for its twelve spellings, undefined for anything else (its error). */
export function parseGoBool(text: string): boolean | undefined {
  if (TRUE_SPELLINGS.has(text)) return true;
  if (FALSE_SPELLINGS.has(text)) return false;
  return undefined;
}
