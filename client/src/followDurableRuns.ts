// Durable runs: the language server lists and follows the runs of the engine `acmp.engine.url` names once asked
// (acmp/durableRuns); their events then come as any run's. Asked again whenever the server (re)starts, after a window
// reload among others, and when the setting changes. Never asked in an untrusted workspace (the server polls only
// once asked): its settings must not make the window reach an engine. Asked once the user trusts it.
import { type Disposable, workspace } from 'vscode';
import { type LanguageClient, State } from 'vscode-languageclient/node';
import { DURABLE_RUNS_REQUEST, type DurableRunsParams } from '../../server/src/protocol/runMessages';
import type { RunsModel } from './runs';

export function followDurableRuns(client: LanguageClient, runs: RunsModel): Disposable[] {
  const follow = (): void => {
    if (!workspace.isTrusted || client.state !== State.Running) return;
    // The runs whose end the window kept need no replay of their event logs.
    const params: DurableRunsParams = { known: runs.finishedDurableRuns() };
    // The server shows why the engine cannot be asked (once); a server stopping meanwhile has nothing to add.
    client.sendRequest(DURABLE_RUNS_REQUEST, params).then(undefined, () => undefined);
  };
  return [
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Running) follow();
    }),
    workspace.onDidChangeConfiguration((change) => {
      if (change.affectsConfiguration('acmp.engine.url')) follow();
    }),
    workspace.onDidGrantWorkspaceTrust(follow),
  ];
}
