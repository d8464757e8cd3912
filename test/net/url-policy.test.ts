import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkUrlSyntax, checkUrlTarget, parseUserUrl, refusedAddressReason } from '../../src/net/url-policy.js';

const field = 'callback_url';

describe('addresses a user-supplied URL may not target', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'], // Alibaba Cloud metadata
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'], // Oracle Cloud metadata
    ['192.0.2.1', 'reserved'], // TEST-NET-1
    ['198.18.0.1', 'reserved'], // benchmarking
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback (IPv4-mapped 127.0.0.1)'],
    ['::ffff:7f00:1', 'loopback (IPv4-mapped 127.0.0.1)'],
    ['::ffff:169.254.169.254', 'metadata (IPv4-mapped 169.254.169.254)'],
    ['::ffff:10.0.0.1', 'private (IPv4-mapped 10.0.0.1)'],
    ['::ffff:0:127.0.0.1', 'loopback (IPv4-translated 127.0.0.1)'],
    ['64:ff9b::127.0.0.1', 'loopback (NAT64 127.0.0.1)'],
    ['64:ff9b::a9fe:a9fe', 'metadata (NAT64 169.254.169.254)'],
    ['64:ff9b:1::1', 'NAT64 local-use'],
    ['2002:7f00:1::', 'loopback (6to4 127.0.0.1)'],
    ['2002:c0a8:101::1', 'private (6to4 192.168.1.1)'],
    ['2001:0:4136:e378::1', 'Teredo'],
    ['2001:db8::1', 'reserved'], // documentation
    ['::127.0.0.1', 'reserved'], // IPv4-compatible, deprecated
    ['100::1', 'discard-only'],
    ['fec0::1', 'site-local'], // deprecated
    ['[::1]', 'loopback'],
    ['localhost', 'not an IP address'],
    ['0x7f.1', 'not an IP address'], // only canonical literals count as addresses here
    ['', 'not an IP address'],
  ];
  for (const [address, reason] of refused) {
    test(`${address || '(empty)'} is refused: ${reason}`, () => {
      assert.equal(refusedAddressReason(address), reason);
    });
  }

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '169.253.255.255',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ];
  for (const address of allowed) {
    test(`${address} is allowed`, () => {
      assert.equal(refusedAddressReason(address), undefined);
    });
  }
});

describe('checkUrlSyntax', () => {
  const cases: [string, string | undefined][] = [
    ['https://hooks.example.com/tollroute?token=abc', undefined],
    ['http://hooks.example.com:8080/x', undefined],
    ['http://93.184.216.34/', undefined],
    ['http://[2606:4700:4700::1111]/', undefined],
    ['ftp://hooks.example.com/', 'callback_url: must be an http(s) URL'],
    ['file:///etc/passwd', 'callback_url: must be an http(s) URL'],
    ['gopher://127.0.0.1:6379/_', 'callback_url: must be an http(s) URL'],
    ['javascript:alert(1)', 'callback_url: must be an http(s) URL'],
    ['not a url', 'callback_url: must be an http(s) URL'],
    ['//hooks.example.com/', 'callback_url: must be an http(s) URL'],
    ['', 'callback_url: must be an http(s) URL'],
    ['http://user:pass@hooks.example.com/', 'callback_url: must not contain credentials'],
    ['http://user@hooks.example.com/', 'callback_url: must not contain credentials'],
    ['http://:pass@hooks.example.com/', 'callback_url: must not contain credentials'],
    ['http://127.0.0.1:80@evil.example/', 'callback_url: must not contain credentials'],
    ['http://127.0.0.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://localhost:8080/', 'callback_url: refused address localhost (loopback)'],
    ['http://LOCALHOST./', 'callback_url: refused address localhost. (loopback)'],
    ['http://api.localhost/', 'callback_url: refused address api.localhost (loopback)'],
    // numeric IPv4 forms: WHATWG URL parsing turns them all into 127.0.0.1
    ['http://2130706433/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://0x7f.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://017700000001/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://0x7f000001/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://0177.0.0.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://127.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://127.0.0.1./', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://%31%32%37.0.0.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://①②⑦.0.0.1/', 'callback_url: refused address 127.0.0.1 (loopback)'],
    ['http://0/', 'callback_url: refused address 0.0.0.0 (unspecified)'],
    ['http://169.254.169.254/latest/meta-data/', 'callback_url: refused address 169.254.169.254 (metadata)'],
    ['http://0xa9fea9fe/', 'callback_url: refused address 169.254.169.254 (metadata)'],
    ['http://10.0.0.1/', 'callback_url: refused address 10.0.0.1 (private)'],
    ['http://100.64.1.1/', 'callback_url: refused address 100.64.1.1 (carrier-grade NAT)'],
    ['http://[::1]/', 'callback_url: refused address [::1] (loopback)'],
    ['http://[::ffff:127.0.0.1]/', 'callback_url: refused address [::ffff:7f00:1] (loopback (IPv4-mapped 127.0.0.1))'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'callback_url: refused address [::ffff:a9fe:a9fe] (metadata (IPv4-mapped 169.254.169.254))'],
    ['http://[fd00:ec2::254]/', 'callback_url: refused address [fd00:ec2::254] (metadata)'],
    ['http://[fe80::1]/', 'callback_url: refused address [fe80::1] (link-local)'],
    ['http://[64:ff9b::7f00:1]/', 'callback_url: refused address [64:ff9b::7f00:1] (loopback (NAT64 127.0.0.1))'],
  ];
  for (const [url, expected] of cases) {
    test(`${JSON.stringify(url)} → ${expected ?? 'accepted'}`, () => {
      assert.equal(checkUrlSyntax(url, { field }), expected);
    });
  }

  test('allowPrivate accepts private addresses but still requires http(s) without credentials', () => {
    const allow = { field, allowPrivate: true };
    assert.deepEqual(
      ['http://127.0.0.1:8081/hook', 'http://localhost/', 'http://[::1]/', 'http://169.254.169.254/', 'http://0x7f.1/'].map((url) =>
        checkUrlSyntax(url, allow),
      ),
      [undefined, undefined, undefined, undefined, undefined],
    );
    assert.equal(checkUrlSyntax('ftp://127.0.0.1/', allow), 'callback_url: must be an http(s) URL');
    assert.equal(checkUrlSyntax('http://a:b@127.0.0.1/', allow), 'callback_url: must not contain credentials');
  });

  test('the field is named in the message, `url` by default', () => {
    assert.equal(checkUrlSyntax('ftp://x/', { field: 'file_url' }), 'file_url: must be an http(s) URL');
    assert.equal(checkUrlSyntax('ftp://x/'), 'url: must be an http(s) URL');
  });
});

describe('parseUserUrl: parsed and normalised before any other check', () => {
  const judged = (raw: string) => {
    const parsed = parseUserUrl(raw, 'file_url');
    return 'problem' in parsed ? parsed.problem : parsed.url.href;
  };
  const cases: [string, string][] = [
    ['https://media.example.com/a/meeting.mp3?X-Sig=a%2Fb%2e', 'https://media.example.com/a/meeting.mp3?X-Sig=a%2Fb%2e'],
    ['HTTPS://Media.Example.COM:443/a.mp3', 'https://media.example.com/a.mp3'],
    // literal dot segments are resolved: the URL is judged as the path it names
    ['http://gw.example/files/../metrics', 'http://gw.example/metrics'],
    ['http://gw.example/files/./x/../../metrics', 'http://gw.example/metrics'],
    ['http://gw.example/files/%2e%2e/metrics', 'file_url: must not contain an encoded dot segment (%2e%2e)'],
    ['http://gw.example/files/%2E%2E/metrics', 'file_url: must not contain an encoded dot segment (%2E%2E)'],
    ['http://gw.example/files/.%2e/metrics', 'file_url: must not contain an encoded dot segment (.%2e)'],
    ['http://gw.example/files/%2e/metrics', 'file_url: must not contain an encoded dot segment (%2e)'],
    ['http://gw.example/files/a%2ebin', 'http://gw.example/files/a%2ebin'],
    ['http://gw.example/files/..%2fmetrics', 'file_url: must not contain an encoded / or \\ in its path'],
    ['http://gw.example/files/..%5Cmetrics', 'file_url: must not contain an encoded / or \\ in its path'],
    ['http://gw.example/files\\..\\metrics', 'file_url: must not contain a backslash'],
    ['http://gw.example/files/.\t./metrics', 'file_url: must not contain spaces or control characters'],
    ['http://gw.example/files/x\n', 'file_url: must not contain spaces or control characters'],
    [' http://gw.example/', 'file_url: must not contain spaces or control characters'],
    ['file:///etc/passwd', 'file_url: must be an http(s) URL'],
    ['not a url', 'file_url: must not contain spaces or control characters'],
    ['nope', 'file_url: must be an http(s) URL'],
    ['http://user:pw@gw.example/', 'file_url: must not contain credentials'],
  ];
  for (const [raw, expected] of cases) {
    test(`${JSON.stringify(raw)} → ${expected}`, () => {
      assert.equal(judged(raw), expected);
    });
  }
});

describe('checkUrlTarget at creation', () => {
  const notFound = async (): Promise<{ address: string }[]> => {
    throw Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example.com'), { code: 'EAI_AGAIN' });
  };

  test('a host that does not resolve now passes: its address is judged when it is used', async () => {
    assert.equal(await checkUrlTarget('https://hooks.example.com/done', { field, lookup: notFound }), undefined);
  });

  test('a lookup that does not answer in time passes, without waiting on it', async () => {
    const started = Date.now();
    const hung = () => new Promise<{ address: string }[]>(() => {});
    assert.equal(await checkUrlTarget('https://hooks.example.com/done', { field, lookup: hung, lookupTimeoutMs: 50 }), undefined);
    assert.ok(Date.now() - started < 1_000);
  });

  test('a host that resolves to a private address is refused', async () => {
    const privateAnswer = async () => [{ address: '10.0.0.7' }];
    assert.equal(
      await checkUrlTarget('https://hooks.example.com/done', { field, lookup: privateAnswer }),
      'callback_url: refused address hooks.example.com resolves to 10.0.0.7 (private)',
    );
  });

  test('a private IP literal is refused at once, without a lookup', async () => {
    let looked = false;
    const lookup = async () => {
      looked = true;
      return [];
    };
    assert.match((await checkUrlTarget('http://192.168.1.10/done', { field, lookup })) ?? '', /^callback_url: /);
    assert.equal(looked, false);
  });
});
