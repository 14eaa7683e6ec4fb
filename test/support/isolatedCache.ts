// Loaded before every test process (package.json `--import`): what acmp-dag keeps across runs (price history, catalog
// copies, the result store) goes to a folder of this test file, never the user's cache, so no test file sees another's
// results or the machine's past. The test runner's own process makes one too, for what it spawns outside a file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Each test file runs in a child of the runner (NODE_TEST_CONTEXT set), which inherits the runner's folder: it gets
// its own instead, so that a file's runs never complete from another file's stored results.
const chosen = process.env.ACMP_DAG_CACHE_DIR;
if (chosen === undefined || chosen === '' || process.env.NODE_TEST_CONTEXT !== undefined) {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-dag-test-cache-'));
  // Child processes (the CLI and servers a test spawns) inherit it; the maker removes it.
  process.env.ACMP_DAG_CACHE_DIR = folder;
  process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
}
