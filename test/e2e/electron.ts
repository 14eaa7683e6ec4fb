// `npm run test:electron`: the same suite through @vscode/test-electron, which downloads a VS Code build from
// Microsoft's update service. For machines that can reach it; CI here cannot and runs `npm run test:e2e` instead.
import { runTests } from '@vscode/test-electron';
import { Failure, buildExtensionAndSuite, root, suiteFile, workspace } from './build';

async function main(): Promise<void> {
  await buildExtensionAndSuite();
  await runTests({
    extensionDevelopmentPath: root,
    extensionTestsPath: suiteFile,
    launchArgs: [workspace, '--disable-extensions', '--skip-welcome', '--disable-workspace-trust'],
  });
}

main().catch((error: unknown) => {
  console.error(`e2e (electron): ${error instanceof Failure ? error.message : String(error)}`);
  process.exitCode = 1;
});
