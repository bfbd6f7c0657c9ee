// The node untaint controller's settings: istiod's names and defaults, Go booleans, and a bad
// namespace or taint key refused while the flags are read.

import { parseServeOptions, serveHelp } from '../../../src/config/options';
import { UsageError } from '../../../src/config/settings';
import {
  DNS1123_LABEL_MAX,
  DNS1123_SUBDOMAIN_MAX,
  namespaceNameProblem,
  QUALIFIED_NAME_MAX,
  taintKeyProblem,
} from '../../../src/config/kube-names';

describe('node untaint settings', () => {
  test("defaults as istiod's: off, taint cni.istio.io/not-ready, istio-cni in POD_NAMESPACE", () => {
    const o = parseServeOptions([], {});
    expect(o.env.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS).toBe(false);
    expect(o.env.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME).toBe('cni.istio.io/not-ready');
    expect(o.flags.cniNamespace).toBe('istio-system');
  });

  test('--cniNamespace defaults to POD_NAMESPACE, and an empty value means the same', () => {
    expect(parseServeOptions([], { POD_NAMESPACE: 'mesh' }).flags.cniNamespace).toBe('mesh');
    expect(parseServeOptions(['--cniNamespace='], { POD_NAMESPACE: 'mesh' }).flags.cniNamespace).toBe('mesh');
    expect(parseServeOptions(['--cniNamespace', 'kube-system'], { POD_NAMESPACE: 'mesh' }).flags.cniNamespace).toBe(
      'kube-system',
    );
  });

  test.each([
    ['1', true],
    ['t', true],
    ['TRUE', true],
    ['True', true],
    ['0', false],
    ['F', false],
    ['false', false],
    ['', false],
  ])('PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS=%j reads as Go reads it: %s', (text, value) => {
    expect(
      parseServeOptions([], { PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: text }).env.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS,
    ).toBe(value);
  });

  test('the taint key can be any valid taint key', () => {
    const env = parseServeOptions([], { PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: 'example.com/cni-not-ready' }).env;
    expect(env.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME).toBe('example.com/cni-not-ready');
    const bare = parseServeOptions([], { PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: 'cni-not-ready' }).env;
    expect(bare.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME).toBe('cni-not-ready');
  });

  test.each<[string[], Record<string, string>, string]>([
    [
      [],
      { PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: 'yes' },
      'env PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: "yes" is not a boolean',
    ],
    [
      [],
      { PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: '' },
      'env PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: "" is not a taint key',
    ],
    [[], { PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: 'cni.istio.io/' }, 'is not a taint key'],
    [
      [],
      { PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: 'Bad_Prefix/x' },
      'the prefix "Bad_Prefix" must be a DNS subdomain',
    ],
    [['--cniNamespace', 'Kube_System'], {}, 'invalid value for --cniNamespace: "Kube_System" is not a namespace name'],
  ])('%j %j is a usage error naming the setting', (argv, env, message) => {
    expect(() => parseServeOptions(argv, env)).toThrow(UsageError);
    expect(() => parseServeOptions(argv, env)).toThrow(message);
  });

  test('--help lists the flag and both variables', () => {
    const help = serveHelp();
    for (const name of [
      '--cniNamespace',
      'PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS',
      'PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME',
    ])
      expect(help).toContain(name);
  });
});

describe('Kubernetes name limits', () => {
  test(`a namespace name is at most DNS1123_LABEL_MAX (${DNS1123_LABEL_MAX}) characters`, () => {
    expect(namespaceNameProblem('a'.repeat(DNS1123_LABEL_MAX))).toBeUndefined();
    expect(namespaceNameProblem('a'.repeat(DNS1123_LABEL_MAX + 1))).toMatch(/longer than 63/);
  });

  test(`the name part of a taint key is at most QUALIFIED_NAME_MAX (${QUALIFIED_NAME_MAX}) characters`, () => {
    expect(taintKeyProblem(`x.io/${'a'.repeat(QUALIFIED_NAME_MAX)}`)).toBeUndefined();
    expect(taintKeyProblem(`x.io/${'a'.repeat(QUALIFIED_NAME_MAX + 1)}`)).toMatch(/longer than 63/);
  });

  test(`a taint key's prefix is at most DNS1123_SUBDOMAIN_MAX (${DNS1123_SUBDOMAIN_MAX}) characters`, () => {
    const prefix = (n: number) => `${'a'.repeat(62)}.`.repeat(5).slice(0, n - 1) + 'b';
    expect(prefix(DNS1123_SUBDOMAIN_MAX)).toHaveLength(DNS1123_SUBDOMAIN_MAX);
    expect(taintKeyProblem(`${prefix(DNS1123_SUBDOMAIN_MAX)}/x`)).toBeUndefined();
    expect(taintKeyProblem(`${prefix(DNS1123_SUBDOMAIN_MAX)}b/x`)).toMatch(/must be a DNS subdomain/);
  });

  test.each(['-a', 'a-', 'a.b', 'A', ''])('%j is not a namespace name', (v) => {
    expect(namespaceNameProblem(v)).toBeDefined();
  });

  test.each(['a/b/c', '/x', 'x/', 'x y', '.x'])('%j is not a taint key', (v) => {
    expect(taintKeyProblem(v)).toBeDefined();
  });
});
