// The graph view's drawing in a worker of its own, which the page starts (graph.ts): the drawing's work is then off
// the thread the page shares with VS Code's window (at a 10,000-task run's end the page's frames took 17-81 ms of
// the window's longest frames).
import { type ToGraphCanvas, startGraphCanvas } from './graphMessages';

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToGraphCanvas>) => void) | null;
  postMessage(message: unknown): void;
};
const receive = startGraphCanvas((message) => scope.postMessage(message));
scope.onmessage = (event) => receive(event.data);
