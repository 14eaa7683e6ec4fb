// The version the CLI reports and SARIF names: package.json's.
export const VERSION = '0.1.0';
