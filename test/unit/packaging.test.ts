// What a user installs: the .vsix carries what the extension loads and nothing else, the npm package what its two
// bins run and nothing else. Both lists come from the packagers themselves (vsce's file list, `npm pack --dry-run`)
// over the built dist/.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { PackageManager, listFiles } from '@vscode/vsce';

const ROOT = resolve(__dirname, '../..');

interface Manifest {
  main: string;
  icon: string;
  bin: Record<string, string>;
  contributes: {
    languages: { configuration: string; icon: { light: string; dark: string } }[];
    grammars: { path: string }[];
    jsonValidation: { url: string }[];
    viewsContainers: { activitybar: { icon: string }[] };
    views: Record<string, { icon: string }[]>;
  };
}
const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as Manifest;

/** The files package.json points VS Code at, as paths inside the package. */
function filesTheManifestNames(): string[] {
  const { languages, grammars, jsonValidation, viewsContainers, views } = manifest.contributes;
  return [
    manifest.main,
    manifest.icon,
    ...languages.flatMap((language) => [language.configuration, language.icon.light, language.icon.dark]),
    ...grammars.map((grammar) => grammar.path),
    ...jsonValidation.map((validation) => validation.url),
    ...viewsContainers.activitybar.map((container) => container.icon),
    ...Object.values(views).flatMap((viewsOfContainer) => viewsOfContainer.map((view) => view.icon)),
  ].map((path) => path.replace(/^\.\//, ''));
}

test('the .vsix carries every file the extension loads, and no CLI, source map, source or test', async () => {
  const packaged = await listFiles({ cwd: ROOT, packageManager: PackageManager.None });
  // The language client starts dist/server.js (client/src/languageClient.ts); the graph view loads its page's files.
  const needed = new Set([
    ...filesTheManifestNames(),
    'dist/server.js',
    'dist/graph.js',
    'dist/graph.css',
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
  ]);
  for (const file of needed) assert.ok(packaged.includes(file), `the .vsix lacks ${file}`);
  // The media folder holds the icons, the Marketplace icon's SVG source among them.
  const extra = packaged.filter((file) => !needed.has(file) && !file.startsWith('client/media/'));
  assert.deepEqual(extra, []);
});

test('the npm package carries the CLI with every chunk, the language server and the schema, and nothing else', () => {
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(packed.status, 0, packed.stderr);
  const [tarball] = JSON.parse(packed.stdout) as { files: { path: string }[] }[];
  const chunks = readdirSync(resolve(ROOT, 'dist/cli'))
    .filter((name) => name.endsWith('.mjs'))
    .map((name) => `dist/cli/${name}`);
  const expected = [
    ...Object.values(manifest.bin),
    ...chunks,
    'dist/acmp-dag.schema.json',
    'package.json',
    'README.md',
    'LICENSE',
  ];
  assert.deepEqual(tarball?.files.map((file) => file.path).sort(), expected.sort());
});
