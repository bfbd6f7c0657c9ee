// File text -> the plain values of its documents, with the line each starts on. YAML goes through
// the yaml package's CST parser (iterative) with a stop at MAX_MANIFEST_DEPTH and at
// MAX_MANIFEST_OBJECTS documents, so its recursive composer only builds what it can; duplicate
// keys are found with a Set per mapping (the package's own check rescans the mapping for every
// key, which made a 400,000-key mapping take hours).

import { Composer, isAlias, isMap, isScalar, isSeq, LineCounter, Parser, type Document, type Node } from 'yaml';
import { MAX_MANIFEST_DEPTH, MAX_MANIFEST_OBJECTS, MAX_YAML_ALIAS_COUNT, TOO_DEEP, TOO_MANY_OBJECTS } from './limits';

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'ManifestError';
  }
}

export interface RawDocument {
  value: unknown;
  line: number;
  /** Line of items[i], for List kinds. */
  itemLine?: (index: number) => number;
}

/**
 * The CST parser's stack holds the document, one entry per open collection, and at most one
 * scalar being read; more entries than the depth limit plus these two mean the document is
 * deeper than the limit.
 */
const PARSER_STACK_OVERHEAD = 2;

/** The yaml CST parser with a stop as soon as nesting passes `maxDepth`. */
export class BoundedYamlParser extends Parser {
  constructor(
    onNewLine: ((offset: number) => void) | undefined,
    private readonly maxDepth: number,
    private readonly tooDeep: (offset: number) => never,
  ) {
    super(onNewLine);
  }

  override *next(source: string): ReturnType<Parser['next']> {
    yield* super.next(source);
    if (this.stack.length > this.maxDepth + PARSER_STACK_OVERHEAD) this.tooDeep(this.offset);
  }
}

export function yamlDocuments(text: string, file: string): RawDocument[] {
  const lines = new LineCounter();
  const parser = new BoundedYamlParser(lines.addNewLine, MAX_MANIFEST_DEPTH, (offset) => {
    throw new ManifestError(file, lines.linePos(offset).line, TOO_DEEP);
  });
  let documents = 0;
  function* counted() {
    for (const token of parser.parse(text)) {
      if (token.type === 'document' && ++documents > MAX_MANIFEST_OBJECTS) {
        throw new ManifestError(file, lines.linePos(token.offset).line, TOO_MANY_OBJECTS);
      }
      yield token;
    }
  }
  const list: Document.Parsed[] = Array.from(new Composer({ uniqueKeys: false }).compose(counted()));
  const out: RawDocument[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) throw new ManifestError(file, lines.linePos(err.pos[0]).line, err.message);
    const bad = firstKeyProblem(doc.contents);
    if (bad) throw new ManifestError(file, lines.linePos(bad.offset).line, bad.message);
    const start = doc.contents?.range[0] ?? doc.range[0];
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
    } catch (e) {
      throw new ManifestError(file, lines.linePos(start).line, (e as Error).message);
    }
    out.push({
      value,
      line: lines.linePos(start).line,
      itemLine: (i) => {
        const node = doc.getIn(['items', i], true) as { range?: [number, number, number] } | undefined;
        return lines.linePos(node?.range?.[0] ?? start).line;
      },
    });
  }
  return out;
}

/**
 * The first key that cannot be a Kubernetes field: one that repeats within its mapping (found with
 * a Set per mapping), or one that is a list, a mapping or an alias. JSON has only string keys, so
 * the API server would refuse such a manifest; the yaml library would stringify it with a process
 * warning. Iterative.
 */
function firstKeyProblem(root: Node | null): { message: string; offset: number } | undefined {
  const pending: unknown[] = root ? [root] : [];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const id = `${typeof pair.key.value}:${String(pair.key.value)}`;
          if (seen.has(id))
            return {
              message: `Map keys must be unique; "${String(pair.key.value)}" appears twice`,
              offset: pair.key.range?.[0] ?? 0,
            };
          seen.add(id);
        } else if (isMap(pair.key) || isSeq(pair.key) || isAlias(pair.key)) {
          const what = isAlias(pair.key) ? 'an alias' : isMap(pair.key) ? 'a mapping' : 'a list';
          return { message: `a mapping key must be a plain value, not ${what}`, offset: pair.key.range?.[0] ?? 0 };
        }
        if (pair.value) pending.push(pair.value);
      }
    } else if (isSeq(node)) {
      pending.push(...node.items);
    }
  }
  return undefined;
}

/** JSON is parsed strictly (YAML would accept `{"a": }`), with the line of the error when V8 gives a position. */
export function jsonDocuments(text: string, file: string): RawDocument[] {
  try {
    return [{ value: JSON.parse(text), line: 1 }];
  } catch (e) {
    const [message = ''] = (e as Error).message.split('\n');
    const at = /at position (\d+)/.exec((e as Error).message);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : 1;
    throw new ManifestError(file, line, message);
  }
}
