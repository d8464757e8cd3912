// The README's and docs' code blocks work when pasted: each shell, JS or TS block runs against a
// live gateway and sandbox on free ports, with the variables the documents tell readers to set, the
// gateway's own settings in the environment (so `tollroute …` reaches the same gateway and store),
// and a `tollroute` command on the PATH.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type CodeBlock, cliShim, describeFailure, extractBlocks, readBlocks, retarget, runBlock } from './code-blocks.js';

const blocks = readBlocks();

describe('documentation code blocks', () => {
  let gw: TestGateway;
  let env: Record<string, string>;
  let urls: { gateway: string; sandbox: string };
  let shim: { dir: string; remove(): void } | undefined;

  before(async () => {
    gw = await startTestGateway();
    const { accountId, key } = await gw.account({ creditMicros: 100_000_000 });
    urls = { gateway: gw.url, sandbox: gw.sandbox.url };
    shim = cliShim();
    env = {
      TOLLROUTE_KEY: key,
      TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
      TOLLROUTE_ACCOUNT: accountId,
      TOLLROUTE_STORE: gw.storeUrl,
      TOLLROUTE_DATA_DIR: gw.dataDir,
      HOST: '127.0.0.1',
      PORT: new URL(gw.url).port,
      SANDBOX_PORT: new URL(gw.sandbox.url).port,
      PATH: `${shim.dir}${path.delimiter}${process.env.PATH ?? ''}`,
    };
  });
  after(async () => {
    await gw?.close();
    shim?.remove();
  });

  test('the documents hold runnable blocks to check', () => {
    assert.ok(blocks.filter((block) => block.skip === undefined).length >= 10, `found only: ${blocks.map(where).join(', ')}`);
  });

  for (const block of blocks) {
    if (block.markerError) {
      test(`${where(block)} has a skip marker with its reason`, () => assert.fail(`${where(block)}: ${block.markerError}`));
    } else if (block.skip !== undefined) {
      test(`${where(block)} runs when pasted`, { skip: block.skip }, () => {});
    } else {
      test(`${where(block)} runs when pasted`, async () => {
        const result = await runBlock({ ...block, code: retarget(block.code, urls) }, env);
        assert.equal(result.code, 0, describeFailure(block, result));
      });
    }
  }

  test('a curl block that meets an HTTP error fails', async () => {
    const broken: CodeBlock = {
      file: 'example.md',
      line: 1,
      lang: 'sh',
      code: 'curl -fsS http://127.0.0.1:8080/v1/no-such-endpoint -H "authorization: Bearer $TOLLROUTE_KEY"',
    };
    const result = await runBlock({ ...broken, code: retarget(broken.code, urls) }, env);
    assert.notEqual(result.code, 0, describeFailure(broken, result));
  });

  test('a JS block that throws fails', async () => {
    const result = await runBlock({ file: 'example.md', line: 1, lang: 'js', code: "throw new Error('broken example');" }, env);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /broken example/);
  });
});

describe('reading code blocks from markdown', () => {
  test('a skip marker without a reason is an error, one with a reason skips the block', () => {
    const markdown = ['<!-- docs-test: skip -->', '```sh', 'true', '```', '', '<!-- docs-test: skip (needs docker) -->', '```sh', 'docker ps', '```'].join(
      '\n',
    );
    const [bare, reasoned] = extractBlocks('x.md', markdown);
    assert.ok(bare?.markerError);
    assert.equal(reasoned?.skip, 'needs docker');
  });

  test('blocks in other languages are not run, and lines are counted from the fence', () => {
    const markdown = ['# t', '```yaml', 'a: 1', '```', '```js', 'console.log(1);', '```'].join('\n');
    assert.deepEqual(
      extractBlocks('x.md', markdown).map((b) => [b.lang, b.line, b.code]),
      [['js', 5, 'console.log(1);']],
    );
  });

  test('the documented ports are turned into the test gateway and sandbox addresses', () => {
    const code = retarget('curl http://127.0.0.1:8080/v1/models localhost:8081/__sandbox/faults', {
      gateway: 'http://127.0.0.1:1',
      sandbox: 'http://127.0.0.1:2',
    });
    assert.equal(code, 'curl http://127.0.0.1:1/v1/models http://127.0.0.1:2/__sandbox/faults');
  });
});

function where(block: CodeBlock): string {
  return `${block.file}:${block.line} (${block.lang})`;
}
