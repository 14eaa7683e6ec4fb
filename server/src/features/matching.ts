// How editors match what the user typed against names, for the features that narrow their answers themselves.

/**
 * VS Code's rule for workspace symbols, and a superset of its completion filter: the query's characters appear in
 * the name in order, ignoring case.
 */
export function matchesQuery(name: string, query: string): boolean {
  const lowerName = name.toLowerCase();
  let at = 0;
  for (const character of query.toLowerCase()) {
    at = lowerName.indexOf(character, at);
    if (at === -1) return false;
    at += character.length;
  }
  return true;
}
