// Loaded before every test process (package.json `--import`): what acmp-dag keeps across runs (price history, catalog
// copies) goes to a folder of this test run, never the user's cache, so no test sees another's or the machine's past.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (process.env.ACMP_DAG_CACHE_DIR === undefined || process.env.ACMP_DAG_CACHE_DIR === '') {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-dag-test-cache-'));
  // Child processes (the test runner's files, the CLI and servers they spawn) inherit it; the maker removes it.
  process.env.ACMP_DAG_CACHE_DIR = folder;
  process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
}
