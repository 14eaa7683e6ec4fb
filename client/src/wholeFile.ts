// A file written whole or not at all: a reader (a reloaded window, a watcher) never reads half of it.
import { renameSync, writeFileSync } from 'node:fs';

export function writeWhole(file: string, text: string): void {
  writeFileSync(`${file}.partial`, text);
  renameSync(`${file}.partial`, file);
}
