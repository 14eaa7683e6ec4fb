// A small DAG the editor-feature tests edit (over stdio and in VS Code).

/** split → left, split → right, left → join, right → join; `note` stands apart (an echo of a literal). */
export const DIAMOND = `{
  "dag_id": "dag_diamond",
  "tasks": [
    { "task_id": "task_split", "capability": "text-split", "input": { "type": "text", "data": "A. B." } },
    { "task_id": "task_left", "capability": "sentiment-analysis",
      "input": { "source": { "from_task": "task_split", "field": "data.chunks[0]" } } },
    { "task_id": "task_right", "capability": "sentiment-analysis",
      "input": { "source": { "from_task": "task_split", "field": "data.chunks[1]" } } },
    { "task_id": "task_join", "capability": "result-aggregation",
      "input": { "source": { "from_tasks": ["task_left", "task_right"] } } },
    { "task_id": "task_note", "capability": "echo", "input": { "type": "json", "data": { "lines": ["x"], "n": 1 } } }
  ],
  "edges": [
    { "from": "task_split", "to": "task_left" },
    { "from": "task_split", "to": "task_right" },
    { "from": "task_left", "to": "task_join" },
    { "from": "task_right", "to": "task_join" }
  ]
}
`;

/** DIAMOND with its first `search` replaced; fails when the fixture has no `search` (a test edited out of date). */
export function diamondWith(search: string, replacement: string): string {
  if (!DIAMOND.includes(search)) throw new Error(`the fixture has no ${search}`);
  return DIAMOND.replace(search, replacement);
}
