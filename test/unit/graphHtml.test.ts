// The graph webview's page: a strict Content-Security-Policy, no inline script or style, nothing from the network.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { graphHtml } from '../../client/src/graphPage';

const CSP_SOURCE = 'https://file+.vscode-resource.vscode-cdn.net';
const resources = {
  cspSource: CSP_SOURCE,
  scriptUri: `${CSP_SOURCE}/ext/dist/graph.js`,
  styleUri: `${CSP_SOURCE}/ext/dist/graph.css`,
};
const html = graphHtml(resources);

/** The page with the webview's own resource origin taken out: what is left may reach nothing. */
const withoutWebviewResources = html.replaceAll(CSP_SOURCE, 'WEBVIEW');

describe('the graph webview page', () => {
  test('has a strict Content-Security-Policy: nothing by default, scripts and styles from the webview only', () => {
    const policies = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/g)];
    assert.equal(policies.length, 1);
    const directives = policies[0]![1]!.split(';').map((directive) => directive.trim());
    assert.deepEqual(directives, [`default-src 'none'`, `script-src ${CSP_SOURCE}`, `style-src ${CSP_SOURCE}`]);
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval|nonce-/);
  });

  test('loads its script and style sheet from the webview and holds no inline script, style or handler', () => {
    assert.deepEqual(
      [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map(([, attributes, body]) => [attributes, body]),
      [[` src="${resources.scriptUri}"`, '']],
    );
    assert.ok(html.includes(`<link rel="stylesheet" href="${resources.styleUri}">`));
    assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i);
  });

  test('names no http(s) resource besides the webview origin', () => {
    assert.doesNotMatch(withoutWebviewResources, /https?:/);
  });

  test('escapes what it is given into attributes', () => {
    const hostile = graphHtml({ ...resources, scriptUri: '"><script>alert(1)</script>' });
    assert.equal([...hostile.matchAll(/<script\b/g)].length, 1);
    assert.match(hostile, /src="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });
});
