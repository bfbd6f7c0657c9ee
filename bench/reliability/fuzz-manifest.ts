// Local-mode manifests: the demo mesh's files, mutated as object trees (then written back as YAML
// or JSON) or as YAML text (alias bombs, deep flow nesting, tags, tabs, broken documents), parsed
// by the local source's parser (src/store/local/manifest.ts). A ManifestError is a clean refusal.
// What parses is then applied to a store under a live ambient index over the demo mesh (and
// removed again), as the local source would: an exception there would stop every later reload.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { ManifestError, parseManifest } from '../../src/store/local/manifest';
import { buildFolderIndex, DEMO_DIR } from './folder-index';
import { DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME, depthOf, Json, mutateJson, mutateText, toJsonText } from './mutate-json';
import type { Rng } from './prng';
import { CaseRecord, count, FuzzTarget, Verdict } from './target';

const YAML_SNIPPETS = (rng: Rng): string =>
  rng.pick([
    () =>
      'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
    () =>
      `x: ${'['.repeat(rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME))}1${']'.repeat(rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME))}\n`,
    () =>
      `x: ${'{a: '.repeat(rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME))}1${'}'.repeat(rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME))}\n`,
    () => 'metadata: !!binary aGVsbG8=\n',
    () => 'spec: !!js/function "function(){}"\n',
    () => 'metadata:\n  name: a\n  name: b\n',
    () => '\tkind: Pod\n',
    () => '---\n---\n...\n',
    () => '<<: *missing\n',
    () => 'metadata: {<<: {name: x}}\n',
    () => '%YAML 1.1\n---\n',
    () => `key: ${'x'.repeat(rng.scale([100, 1000], [200_000, 2_000_000]))}\n`,
    () => 'apiVersion: v1\nkind: List\nitems:\n  - kind: List\n    apiVersion: v1\n',
    () => '? [a, b]\n: c\n',
    () => 'a: 0x1F\nb: 1e999\nc: .nan\nd: ~\n',
  ])();

/**
 * Slowest parse that is not a hang: 250 KB/s, a quarter of what the yaml library manages on a
 * plain 8 MB file. The server parses files on its parser thread (LOCAL_PARSE_TIMEOUT_MS), so a
 * multi-megabyte file costs seconds there without stalling anyone; only superlinear work is a bug.
 */
const MIN_PARSE_BYTES_PER_MS = 250;

/** Deepest tree written as block YAML; the yaml library's writer recurses, so deeper trees are written as JSON (a YAML flow). */
const YAML_WRITER_DEPTH = 500;

/** Block YAML, or JSON (which is YAML) for trees too deep for the writer. */
function toYaml(doc: Json): string {
  return depthOf(doc) < YAML_WRITER_DEPTH ? stringify(doc, { aliasDuplicateObjects: false }) : `${toJsonText(doc)}\n`;
}

export async function manifestTarget(): Promise<FuzzTarget> {
  const files = fs
    .readdirSync(DEMO_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ name: f, text: fs.readFileSync(path.join(DEMO_DIR, f), 'utf8') }));
  // Single documents (as text) make most inputs: whole files cost the YAML parser milliseconds each.
  const docTexts = files.flatMap((f) => f.text.split(/^---$/m)).filter((t) => /kind:/.test(t));
  const docs: Json[] = files.flatMap((f) =>
    parseAllDocuments(f.text).flatMap((d) => (Array.isArray(d) ? [] : [d.toJS() as Json])),
  );
  const demo = await buildFolderIndex(DEMO_DIR);
  const tally = new Map<string, number>();

  return {
    name: 'manifest',
    describe:
      'demo manifests mutated as trees and as YAML text into parseManifest() (src/store/local/manifest.ts), then applied to a store under a live ambient index',
    tally,
    run(rng: Rng, record: CaseRecord): Verdict {
      const asJson = rng.chance(0.4);
      const file = asJson ? 'fuzz.json' : 'fuzz.yaml';
      let text: string;
      if (rng.chance(0.7)) {
        const picked = Array.from({ length: rng.chance(0.8) ? 1 : 2 + rng.int(2) }, () =>
          mutateJson(rng, rng.pick(docs), docs),
        );
        text = asJson
          ? toJsonText(
              picked.length === 1 && picked[0] !== undefined
                ? picked[0]
                : { apiVersion: 'v1', kind: 'List', items: picked },
            )
          : picked.map(toYaml).join('---\n');
      } else {
        const base = rng.chance(0.1) ? rng.pick(files).text : rng.pick(docTexts);
        text = rng.chance(0.5)
          ? mutateText(rng, base)
          : base.slice(0, rng.int(base.length)) + YAML_SNIPPETS(rng) + base.slice(rng.int(base.length));
      }
      record.input = `${file}: ${JSON.stringify(text)}`;
      record.budgetMs = text.length / MIN_PARSE_BYTES_PER_MS;
      let parsed;
      try {
        parsed = parseManifest(text, file);
      } catch (err) {
        if (!(err instanceof ManifestError)) throw err;
        count(tally, 'refused (ManifestError)');
        return 'refused';
      }
      if (parsed.objects.length === 0) {
        count(tally, 'parsed, no objects of a stored kind');
        return 'accepted';
      }
      // Apply, then restore the demo objects these replaced (same kind, namespace and name).
      const replaced = parsed.objects.map((o) => ({
        kind: o.kind,
        prior: demo.store.get(o.kind, o.object.metadata.namespace, o.object.metadata.name),
      }));
      demo.store.apply(parsed.objects.map((o) => ({ kind: o.kind, object: o.object })));
      demo.store.apply(
        parsed.objects.map((o, i) => {
          const prior = replaced[i]!.prior;
          return prior ? { kind: o.kind, object: prior } : { kind: o.kind, object: o.object, deleted: true };
        }),
      );
      count(tally, 'parsed and applied');
      return 'accepted';
    },
    close: () => demo.close(),
  };
}
