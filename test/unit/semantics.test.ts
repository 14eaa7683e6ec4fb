// The semantics table (test/support/semanticsTable.ts) against the in-memory driver, `startRun`.
import { startRun } from '../../server/src/run/executor';
import { testSemantics } from '../support/semanticsTable';

testSemantics({ name: 'in-memory', start: startRun });
