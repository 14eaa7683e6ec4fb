// The DAG files of the durable-runs phase: the runner writes them into the window's folder (run.ts), the suite runs
// them from the CLI (suite/durable.test.ts). Each is test/support/durable.ts's DIAMOND with the dag_id `dag_e2e_NAME`.
export const DURABLE_E2E_DAGS = ['first', 'second'] as const;
