// How an extension-host entry asks the code-server runner for what only the browser sees (suite/askRunner.ts asks,
// launcher.ts answers): a console line with this marker and the request as JSON; the answer is a file named by its id.
export const ASK_MARKER = 'acmp-e2e: ask ';

export interface Asked {
  readonly id: string;
  readonly name: string;
  readonly argument: unknown;
}

/** A failed test, as one console line with this marker and its title and message as JSON (suite/mocha.ts). */
export const FAILED_MARKER = 'acmp-e2e: failed ';

export interface FailedTest {
  readonly title: string;
  readonly message: string;
}
