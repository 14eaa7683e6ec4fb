// Bundles the client, the language server and the CLI, and writes the JSON Schema generated from the zod schema.
// The schema's validators are compiled here, once: the server and the CLI bundle their code (validatorsCode.ts).
import * as esbuild from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  // jsonc-parser's UMD `main` bundles wrongly (`Cannot find module './impl/format'`); take its ESM build.
  mainFields: ['module', 'main'],
  logLevel: 'warning',
  // The sentiment package requires its languages by a computed path; only English, which it requires by name, is used.
  logOverride: { 'empty-glob': 'silent' },
};
const shebang = { js: '#!/usr/bin/env node' };

const require = createRequire(import.meta.url);
// The build-time modules first: the schema, and the validators' code that the bundles take instead of validators.ts.
await esbuild.build({
  ...common,
  entryPoints: ['server/src/dag/jsonSchema.ts', 'server/src/dag/validatorsCode.ts'],
  outdir: 'out',
  outExtension: { '.js': '.cjs' },
  sourcemap: false,
});
const { dagJsonSchema } = require('./out/jsonSchema.cjs');
const { validatorSource, validatorsModule } = require('./out/validatorsCode.cjs');
mkdirSync('out/validators', { recursive: true });
const validatorPaths = [false, true].map((allErrors) => {
  const path = resolve(`out/validators/${allErrors ? 'everyProblem' : 'firstProblem'}.cjs`);
  writeFileSync(path, validatorSource(allErrors));
  return path;
});
const precompiledValidators = {
  name: 'precompiled-validators',
  setup(build) {
    build.onLoad({ filter: /[\\/]server[\\/]src[\\/]dag[\\/]validators\.ts$/ }, () => ({
      contents: validatorsModule(...validatorPaths),
      loader: 'js',
    }));
  },
};

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['client/src/extension.ts'],
    outfile: 'dist/client.js',
    external: ['vscode'],
  }),
  // The graph webview's script (and, from its import, dist/graph.css): a page script, loaded under a strict CSP.
  esbuild.build({
    ...common,
    entryPoints: ['client/webview/graph.ts'],
    outfile: 'dist/graph.js',
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
  }),
  ...['main', 'cli'].map((entry) =>
    esbuild.build({
      ...common,
      entryPoints: [`server/src/${entry}.ts`],
      outfile: `dist/${entry === 'main' ? 'server' : 'cli'}.js`,
      banner: shebang,
      plugins: [precompiledValidators],
    }),
  ),
]);

mkdirSync('dist', { recursive: true });
writeFileSync('dist/acmp-dag.schema.json', JSON.stringify(dagJsonSchema(), null, 2) + '\n');
