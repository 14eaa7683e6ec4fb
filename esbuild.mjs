// Bundles the client, the language server and the CLI, and writes the JSON Schema generated from the zod schema.
import * as esbuild from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';

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
  esbuild.build({ ...common, entryPoints: ['server/src/main.ts'], outfile: 'dist/server.js', banner: shebang }),
  esbuild.build({ ...common, entryPoints: ['server/src/cli.ts'], outfile: 'dist/cli.js', banner: shebang }),
  esbuild.build({
    ...common,
    entryPoints: ['server/src/dag/jsonSchema.ts'],
    outfile: 'out/jsonSchema.cjs',
    sourcemap: false,
  }),
]);

const { require } = await import('node:module').then((m) => ({ require: m.createRequire(import.meta.url) }));
const { dagJsonSchema } = require('./out/jsonSchema.cjs');
mkdirSync('dist', { recursive: true });
writeFileSync('dist/acmp-dag.schema.json', JSON.stringify(dagJsonSchema(), null, 2) + '\n');
