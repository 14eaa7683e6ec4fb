// Bundles the client, the language server and the CLI, and writes the JSON Schema generated from the zod schema.
// The schema's validators are compiled here, once: the server and the CLI bundle their code (validatorsCode.ts).
// `--production` (the .vsix and the npm package): without source maps, and minified but for the identifiers, so a stack
// trace a user reports still names the functions (esbuild's keepNames does too, but costs 15% more time to load).
import * as esbuild from 'esbuild';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const production = process.argv.includes('--production');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minifyWhitespace: production,
  minifySyntax: production,
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

// The graph view's drawing, for the worker its page starts from this text (client/webview/graphPageScript.ts).
const webview = { ...common, platform: 'browser', target: 'es2022', format: 'iife', sourcemap: false };
const graphWorker = await esbuild.build({
  ...webview,
  entryPoints: ['client/webview/graphWorker.ts'],
  write: false,
  outdir: 'dist',
  minify: true,
});

// A build's chunks have new names: the last build's go first. A production build leaves no source map of an earlier
// development build beside code it no longer describes.
rmSync('dist/cli', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });
if (production) {
  for (const file of readdirSync('dist', { withFileTypes: true })) {
    if (file.isFile() && file.name.endsWith('.map')) rmSync(`dist/${file.name}`);
  }
}
await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['client/src/extension.ts'],
    outfile: 'dist/client.js',
    external: ['vscode'],
  }),
  // The graph webview's script (and, from its import, dist/graph.css): a page script, loaded under a strict CSP.
  esbuild.build({
    ...webview,
    sourcemap: !production,
    entryPoints: ['client/webview/graphPageScript.ts'],
    outfile: 'dist/graph.js',
    define: { GRAPH_WORKER_SCRIPT: JSON.stringify(graphWorker.outputFiles[0].text) },
  }),
  esbuild.build({
    ...common,
    entryPoints: ['server/src/main.ts'],
    outfile: 'dist/server.js',
    banner: shebang,
    plugins: [precompiledValidators],
  }),
  // The CLI as ES modules split into chunks: a command loads only the chunks it imports (`run` about 350 KB of 2 MB,
  // which saves start-up time and about 10 MB of memory). Bundled CommonJS dependencies call `require`: made here.
  esbuild.build({
    ...common,
    format: 'esm',
    splitting: true,
    entryPoints: { cli: 'server/src/cli.ts' },
    outdir: 'dist/cli',
    outExtension: { '.js': '.mjs' },
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins: [precompiledValidators],
  }),
]);
// `dist/cli.js`, the `acmp-dag` bin: CommonJS like every .js here, it only starts the ES module CLI. One background
// thread for V8 (the default is four): a command is short and mostly single-threaded, and on a 2-core machine four
// GC helpers contend with it (10,000 echo tasks, median of ten: 0.44 -> 0.395 s, 79 -> 76 MiB). `env -S` passes the flag (Linux,
// macOS; npm's Windows shims read it too); `node dist/cli.js` runs without it.
writeFileSync('dist/cli.js', `#!/usr/bin/env -S node --v8-pool-size=1\nimport('./cli/cli.mjs');\n`, { mode: 0o755 });

writeFileSync('dist/acmp-dag.schema.json', JSON.stringify(dagJsonSchema(), null, 2) + '\n');
