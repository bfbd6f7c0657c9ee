// No program text built from strings in src/: every line that runs is in a file tsc compiles and
// eslint reads. A worker starts from a file (never `eval: true`), nothing compiles text at run time
// (eval, Function, node:vm, module._compile), no function is turned back into text (its
// toString, String(fn), `${fn}`) to run elsewhere, and no string literal holds a script. Read from
// each file's syntax tree, so comments and prose in strings do not trip it; the fixtures below prove
// each form is caught, so the scan of src/ cannot pass by reading nothing.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** A string literal this many lines long or longer is checked for being a script. */
const SCRIPT_MIN_LINES = 5;

/** node:vm and CommonJS internals that run text as code. */
const COMPILING_CALLS = new Set(['runInThisContext', 'runInNewContext', 'runInContext', 'compileFunction', '_compile']);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.[cm]?[jt]s$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

function nameOf(e: ts.Expression): string | undefined {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
}

/**
 * A program over these files (name -> text), for its checker: which declaration a name refers to,
 * through scopes and imports between them. No library and no packages: only the files' own
 * functions matter here.
 */
function programOf(files: Map<string, string>): ts.Program {
  const options: ts.CompilerOptions = { noLib: true, types: [], target: ts.ScriptTarget.ES2022, allowJs: true };
  const host = ts.createCompilerHost(options);
  host.getSourceFile = (name, target) => {
    const text = files.get(name);
    return text === undefined ? undefined : ts.createSourceFile(name, text, target, true);
  };
  host.fileExists = (name) => files.has(name);
  host.readFile = (name) => files.get(name);
  return ts.createProgram([...files.keys()], options, host);
}

/** Whether an expression is a function: written in place, or a name declared as one. */
function isFunctionIn(checker: ts.TypeChecker, e: ts.Expression): boolean {
  if (ts.isArrowFunction(e) || ts.isFunctionExpression(e)) return true;
  if (!ts.isIdentifier(e)) return false;
  let symbol = checker.getSymbolAtLocation(e);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return (symbol?.declarations ?? []).some(
    (d) =>
      ts.isFunctionDeclaration(d) ||
      (ts.isVariableDeclaration(d) &&
        d.initializer !== undefined &&
        (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))),
  );
}

/** A literal's text as JavaScript, each `${...}` standing in as 0 (a number where code had a value). */
function literalText(node: ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression): string {
  if (!ts.isTemplateExpression(node)) return node.text;
  return node.head.text + node.templateSpans.map((s) => '0' + s.literal.text).join('');
}

/**
 * Whether text is a script: it parses as JavaScript without a syntax error and declares a
 * function, class or variable, or calls something. CSS, HTML, YAML and prose do not parse.
 */
function isScript(text: string): boolean {
  const out = ts.transpileModule(text, {
    fileName: 'literal.js',
    reportDiagnostics: true,
    compilerOptions: { allowJs: true, target: ts.ScriptTarget.ES2022 },
  });
  if ((out.diagnostics ?? []).length > 0) return false;
  const parsed = ts.createSourceFile('literal.js', text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  return parsed.statements.some(
    (s) =>
      ts.isFunctionDeclaration(s) ||
      ts.isClassDeclaration(s) ||
      ts.isVariableStatement(s) ||
      (ts.isExpressionStatement(s) && ts.isCallExpression(s.expression)),
  );
}

/** Every place in one file that builds or runs program text from strings, as `line: what`. */
function programTextOf(file: ts.SourceFile, checker: ts.TypeChecker): string[] {
  const isFunction = (e: ts.Expression) => isFunctionIn(checker, e);
  const found: string[] = [];
  const report = (node: ts.Node, what: string): void => {
    found.push(`${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && nameOf(node.name as ts.Expression) === 'eval')
      report(node, 'an `eval` option (a worker run from a string)');
    if (ts.isNewExpression(node) || ts.isCallExpression(node)) {
      const callee = nameOf(node.expression);
      const args = node.arguments ?? [];
      if (callee === 'eval' || callee === 'Function') report(node, `${callee}() compiles a string`);
      if (callee !== undefined && COMPILING_CALLS.has(callee)) report(node, `${callee}() compiles a string`);
      if (ts.isNewExpression(node) && callee === 'Script') report(node, 'new vm.Script() compiles a string');
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'toString' &&
        isFunction(node.expression.expression)
      )
        report(node, "a function's toString()");
      if (callee === 'String' && args[0] && isFunction(args[0])) report(node, 'String() of a function');
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const value = literalText(node);
      if (value.split('\n').length >= SCRIPT_MIN_LINES && isScript(value)) report(node, 'a script in a string');
      if (ts.isTemplateExpression(node))
        for (const span of node.templateSpans) {
          if (isFunction(span.expression)) report(span, 'a function spliced into a template');
          visit(span.expression);
        }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** programTextOf every file (name -> text), as `name:line: what`. */
function programText(files: Map<string, string>): string[] {
  const program = programOf(files);
  const checker = program.getTypeChecker();
  return [...files.keys()].flatMap((name) => {
    const file = program.getSourceFile(name);
    if (!file) throw new Error(`${name} is not in the program`);
    return programTextOf(file, checker).map((at) => `${name}:${at}`);
  });
}

/** programText of one fixture file, as `line: what`. */
function fixtureText(text: string): string[] {
  return programText(new Map([['/fixture.ts', text]])).map((at) => at.slice('/fixture.ts:'.length));
}

describe('program text in src/', () => {
  const files = sourceFiles(SRC);

  it('reads every source file, the workers and the status page script included', () => {
    const rel = files.map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
    expect(rel).toEqual(
      expect.arrayContaining([
        'src/ca/signing/csr-verify-worker.ts',
        'src/store/local/parse-worker.ts',
        'src/server/ui/status-page.ts',
      ]),
    );
  });

  it('has none: workers start from files, nothing compiles strings, no script sits in a string', () => {
    const found = programText(new Map(files.map((f) => [f, fs.readFileSync(f, 'utf8')])));
    expect(found.map((at) => path.relative(ROOT, at))).toEqual([]);
  });
});

describe('the program-text reader', () => {
  it('finds a worker run from a string with a function spliced in as text', () => {
    const fixture = [
      "import { Worker } from 'node:worker_threads';",
      'function runJob(m: number): number {',
      '  return m + 1;',
      '}',
      'const SOURCE = `',
      "const { parentPort } = require('node:worker_threads');",
      'const runJob = ${runJob.toString()};',
      'parentPort.on("message", (m) => parentPort.postMessage(runJob(m)));',
      'function unused() {}',
      '`;',
      'new Worker(SOURCE, { eval: true });',
    ].join('\n');
    expect(fixtureText(fixture)).toEqual([
      '5: a script in a string',
      "7: a function's toString()",
      '11: an `eval` option (a worker run from a string)',
    ]);
  });

  it('finds eval, Function, node:vm, module._compile, String(fn) and a function spliced in a template', () => {
    const fixture = [
      "import * as vm from 'node:vm';",
      'const f = () => 1;',
      "eval('1');",
      "new Function('return 1');",
      "vm.runInThisContext('1');",
      "new vm.Script('1');",
      "module._compile('1', 'x.js');",
      'const a = String(f);',
      'const b = `${f}`;',
    ].join('\n');
    expect(fixtureText(fixture)).toEqual([
      '3: eval() compiles a string',
      '4: Function() compiles a string',
      '5: runInThisContext() compiles a string',
      '6: new vm.Script() compiles a string',
      '7: _compile() compiles a string',
      '8: String() of a function',
      '9: a function spliced into a template',
    ]);
  });

  it("follows a function's name through imports, and not into a parameter that shadows it", () => {
    const found = programText(
      new Map([
        ['/job.ts', 'export function runJob(): number {\n  return 1;\n}\n'],
        [
          '/pool.ts',
          [
            "import { runJob } from './job';",
            'export const text = runJob.toString();',
            'export function at(runJob: string): string {',
            '  return `${runJob}.key`;',
            '}',
          ].join('\n'),
        ],
      ]),
    );
    expect(found).toEqual(["/pool.ts:2: a function's toString()"]);
  });

  it('leaves markup, styles, prose and short strings alone', () => {
    const fixture = [
      'const STYLE = `',
      'body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; }',
      'h1 { font-size: 1.3rem; }',
      'td { overflow-wrap: anywhere; }',
      '`;',
      'const PAGE = `<!doctype html>',
      '<html lang="en">',
      '<body><h1>status</h1>',
      '<p>${STYLE}</p>',
      '</body></html>`;',
      'const HELP = `Usage: istiod-ts serve [flags]',
      '',
      'Starts the control plane with the given flags.',
      'See the README for the rest.',
      '`;',
      "const one = 'f(1)';",
      'const n = 3;',
      'const text = `${n} ${n.toString()}`;',
    ].join('\n');
    expect(fixtureText(fixture)).toEqual([]);
  });
});
