// The one-way flow of src/ as a lint rule. Each folder (module) of src/ may import only the modules
// listed for it here; everything else, including a reach into test/ or bench/, is an error naming both
// ends. The table is the architecture: docs/architecture.md explains each row, and
// test/unit/architecture/layers.test.ts proves an upward import fails.
'use strict';

const path = require('node:path');

/**
 * module -> the modules it may import. Lower rows never name higher ones: contracts and logging at the
 * bottom, then configuration, the store and the network edge, the mesh model and identities, the
 * domain engines (ambient index, CA, webhook, controllers), the xDS server, and last the composition
 * root (server) and the command line (cli), which only main.ts joins.
 */
const ALLOWED = {
  contract: [],
  'proto-files': [],
  log: [],
  config: ['log'],
  net: ['config', 'log'],
  store: ['config', 'contract', 'log'],
  mesh: ['config', 'contract', 'log', 'store'],
  security: ['config', 'contract', 'log', 'store'],
  ambient: ['config', 'contract', 'log', 'mesh', 'proto-files', 'security', 'store'],
  ca: ['config', 'contract', 'log', 'mesh', 'net', 'proto-files', 'security', 'store'],
  webhook: ['config', 'contract', 'log', 'mesh', 'net', 'store'],
  controllers: ['ambient', 'config', 'contract', 'log', 'mesh', 'security', 'store'],
  // The multicluster mesh index joins one ambient index per cluster, so it sits right above ambient.
  multicluster: ['ambient', 'config', 'contract', 'log', 'mesh', 'security', 'store'],
  xds: ['config', 'contract', 'log', 'mesh', 'net', 'proto-files', 'security', 'store'],
  // `explain` runs the CA's node authorizer (security) and the ambient derivation (ambient) with a
  // decision recorder; it needs both and is neither, so it sits beside the engines, under the server
  // (/debug/explain) and the CLI (`istiod-ts explain`), which both use it.
  explain: ['ambient', 'contract', 'security', 'store'],
  server: [
    'ambient',
    'ca',
    'config',
    'contract',
    'controllers',
    'explain',
    'log',
    'mesh',
    'multicluster',
    'net',
    'proto-files',
    'security',
    'store',
    'webhook',
    'xds',
  ],
  cli: [
    'ambient',
    'ca',
    'config',
    'contract',
    'explain',
    'log',
    'mesh',
    'net',
    'proto-files',
    'security',
    'store',
    'webhook',
    'xds',
  ],
  main: ['cli', 'config', 'log', 'net', 'server'],
};

/**
 * The folders inside a module, bottom first: a folder may import the folders before it in its list,
 * never one after it nor the module's top-level files, which compose them (and may import all).
 * xds/: the bytes of a message, the grpc-js call underneath, the Delta protocol, istioctl's debug
 * queries. ca/: signing, istiod's serving certificate, the roots (rotation, plugged-in, CRL).
 */
const INNER = {
  xds: ['wire', 'grpc', 'protocol', 'debug'],
  ca: ['signing', 'serving-cert', 'roots'],
};

/** The inner folder of a file of `module` ('' for its top-level files), if the module has a list. */
function innerOf(srcDir, module, file) {
  if (!INNER[module]) return undefined;
  const parts = path.relative(path.join(srcDir, module), file).split(path.sep);
  return parts.length > 1 ? parts[0] : '';
}

/** The module of a path under src/: its first folder, or the file's own name for files at the top. */
function moduleOf(srcDir, file) {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const first = rel.split(path.sep)[0];
  return first.replace(/\.(ts|js)$/, '');
}

/** The src/ folder above a file, found by name so the rule works from any working directory. */
function srcDirOf(file) {
  const parts = path.resolve(file).split(path.sep);
  const at = parts.lastIndexOf('src');
  return at < 0 ? undefined : parts.slice(0, at + 1).join(path.sep);
}

const oneWay = {
  meta: {
    type: 'problem',
    docs: { description: 'src/ modules import only the modules below them (tools/eslint/layers.cjs)' },
    schema: [],
    messages: {
      upward: "{{from}}/ may not import {{to}}/ ('{{spec}}'): {{from}} may import only [{{allowed}}]",
      inner:
        "{{module}}/{{from}}/ may not import {{to}} ('{{spec}}'): in {{module}}/ a folder imports only the folders below it [{{below}}]",
      innerUnknown:
        '{{module}}/{{from}}/ is not in the inner layer table (tools/eslint/layers.cjs): add it to INNER.{{module}}',
      unknown: '{{from}}/ is not in the layer table (tools/eslint/layers.cjs): add it with the modules it may import',
      outside: "src/ may not import from outside src/ ('{{spec}}')",
    },
  },
  create(context) {
    const file = context.filename;
    const srcDir = srcDirOf(file);
    if (!srcDir) return {};
    const from = moduleOf(srcDir, file);
    if (!from) return {};
    /** Inside a module with an INNER list: a folder reaches only folders below it. */
    const checkInner = (node, spec, target) => {
      const order = INNER[from];
      const inFrom = innerOf(srcDir, from, file);
      const inTo = innerOf(srcDir, from, target);
      if (!order || inFrom === '' || inFrom === inTo) return;
      const at = order.indexOf(inFrom);
      const data = { module: from, from: inFrom, spec };
      if (at < 0) return context.report({ node, messageId: 'innerUnknown', data });
      const below = order.slice(0, at);
      if (!below.includes(inTo))
        context.report({
          node,
          messageId: 'inner',
          data: { ...data, to: inTo === '' ? 'its top-level files' : `${inTo}/`, below: below.join(', ') },
        });
    };
    const check = (node, spec) => {
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), spec);
      const to = moduleOf(srcDir, target);
      if (to === undefined) return context.report({ node, messageId: 'outside', data: { spec } });
      if (to === from) return checkInner(node, spec, target);
      const allowed = ALLOWED[from];
      if (!allowed) return context.report({ node, messageId: 'unknown', data: { from } });
      if (!allowed.includes(to))
        context.report({ node, messageId: 'upward', data: { from, to, spec, allowed: allowed.join(', ') } });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
      TSImportEqualsDeclaration: (node) =>
        node.moduleReference.type === 'TSExternalModuleReference' && check(node, node.moduleReference.expression.value),
    };
  },
};

module.exports = { ALLOWED, INNER, plugin: { meta: { name: 'istiod-ts-layers' }, rules: { 'one-way': oneWay } } };
