// What the extension says about the result store in words: Show Result Store's summary and table, Clear Result
// Store's question and answer. No `vscode` import: the unit tests check these texts directly.
import type { StoreStats } from '../../server/src/protocol/runMessages';

/** A size in bytes as MiB: `12.3 MiB`, `0.01 MiB`. */
export const mebibytes = (bytes: number): string => `${Number((bytes / 1024 / 1024).toPrecision(3))} MiB`;

const results = (count: number): string => `${count.toLocaleString('en')} result${count === 1 ? '' : 's'}`;

/** `Result store: 1,204 results, 3.1 MiB (4.5 MiB on disk) in /home/me/.cache/acmp-dag/results`. */
export function storeSummary(stats: StoreStats): string {
  if (stats.results === 0) return `The result store in ${stats.folder} is empty.`;
  const disk = stats.diskBytes > stats.bytes ? ` (${mebibytes(stats.diskBytes)} on disk)` : '';
  return `Result store: ${results(stats.results)}, ${mebibytes(stats.bytes)}${disk} in ${stats.folder}`;
}

/** A Markdown table cell's text: its pipes escaped, on one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');

/** The store as a Markdown document: the summary, when its results were made and used, and its capabilities. */
export function storeMarkdown(stats: StoreStats): string {
  const lines = [`## Result store`, '', storeSummary(stats), ''];
  if (stats.oldestMadeAt !== undefined) lines.push(`- oldest result made ${stats.oldestMadeAt}`);
  if (stats.lastUsedAt !== undefined) lines.push(`- last used ${stats.lastUsedAt}`);
  if (stats.byCapability.length > 0) {
    lines.push('', '| capability | results | size |', '| --- | ---: | ---: |');
    for (const { capability, results: count, bytes } of stats.byCapability)
      lines.push(`| ${cell(capability)} | ${count.toLocaleString('en')} | ${mebibytes(bytes)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Clear Result Store's question: `Remove 1,204 stored results (3.1 MiB)?`. */
export const clearQuestion = (stats: StoreStats): string =>
  `Remove ${stats.results.toLocaleString('en')} stored result${stats.results === 1 ? '' : 's'} (${mebibytes(stats.diskBytes)})?`;

/** What went: `Removed 1,204 results (3.1 MiB) from the result store.` */
export function clearedMessage(before: StoreStats, removed: number, after: StoreStats): string {
  const freed = Math.max(0, before.diskBytes - after.diskBytes);
  const left =
    after.results === 0 ? '' : ` ${results(after.results)} written since ${after.results === 1 ? 'is' : 'are'} left.`;
  return `Removed ${results(removed)} (${mebibytes(freed)}) from the result store.${left}`;
}
