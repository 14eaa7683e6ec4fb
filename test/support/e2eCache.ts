// Where `npm run test:e2e` and `npm run bench:ui` install code-server and the Node 24 it needs, once. Outside the
// project: a code-server inside the folder VS Code loads the extension from (the extension development path) shows
// no file icon theme (the window falls back to Minimal, and no language's file icon shows).
import { homedir } from 'node:os';
import { join } from 'node:path';

export const e2eCache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'acmp-dag', 'e2e');
