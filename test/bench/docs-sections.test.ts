// The generated sections of docs/benchmarks.md: each mode's block replaced in place, and the
// default scenarios' results kept per kind of host.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { cpuDetail, hostKind, replaceSection } from '../../bench/docs.js';

const DOC = [
  'intro',
  '<!-- bench:results-amd:start -->',
  'old amd table',
  '<!-- bench:results-amd:end -->',
  '',
  '<!-- bench:results:new-host-kinds -->',
  '',
  '<!-- bench:ledger:start -->',
  'old ledger',
  '<!-- bench:ledger:end -->',
].join('\n');

test('a host is of the kind its CPU maker names', () => {
  assert.deepEqual(
    ['Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz', 'AMD EPYC 7B13', 'AMD Ryzen 9 7950X', 'Neoverse-N1'].map((model) => hostKind(model)),
    ['intel', 'amd', 'amd', 'other'],
  );
});

test('a host whose CPU family is known is of the kind its maker and family name', () => {
  assert.equal(hostKind('AMD EPYC', 26), 'amd-26');
  assert.equal(hostKind('Intel(R) Xeon(R) CPU', 6), 'intel-6');
  assert.equal(hostKind('AMD EPYC', null), 'amd');
});

test('a host whose kernel isolates page tables is a kind of its own', () => {
  assert.equal(hostKind('AMD EPYC', 26, true), 'amd-26-pti');
  assert.equal(hostKind('AMD EPYC', 26, false), 'amd-26');
  const text = replaceSection(DOC, 'results', 'pti table', 'amd-26-pti');
  assert.match(text, /#### AMD hosts, CPU family 26, page-table isolation on\n\n<!-- bench:results-amd-26-pti:start -->\npti table\n/);
});

test("the CPU's family, model and page-table isolation are read from the kernel's files", () => {
  const cpuinfo = 'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nstepping\t: 1\n';
  assert.deepEqual(cpuDetail(cpuinfo, 'Mitigation: PTI\n'), { family: 26, model: 2, pageTableIsolation: true });
  assert.deepEqual(cpuDetail(cpuinfo, 'Not affected\n'), { family: 26, model: 2, pageTableIsolation: false });
  assert.deepEqual(cpuDetail('', ''), { family: null, model: null, pageTableIsolation: null });
});

test('a first run on a family of a maker measured before adds its own table under a heading naming the family', () => {
  const text = replaceSection(DOC, 'results', 'zen table', 'amd-26');
  assert.match(text, /old amd table/);
  assert.match(text, /#### AMD hosts, CPU family 26\n\n<!-- bench:results-amd-26:start -->\nzen table\n/);
});

test('a run on a kind of host measured before replaces that kind’s table and nothing else', () => {
  const text = replaceSection(DOC, 'results', 'new amd table', 'amd');
  assert.match(text, /results-amd:start -->\nnew amd table\n<!-- bench:results-amd:end/);
  assert.doesNotMatch(text, /old amd table/);
  assert.match(text, /old ledger/);
});

test('a first run on another kind of host adds its table under a heading, keeping the other kind’s', () => {
  const text = replaceSection(DOC, 'results', 'intel table', 'intel');
  assert.match(text, /old amd table/);
  assert.match(
    text,
    /#### Intel hosts\n\n<!-- bench:results-intel:start -->\nintel table\n<!-- bench:results-intel:end -->\n\n<!-- bench:results:new-host-kinds -->/,
  );
  // and its next run replaces it in place
  const again = replaceSection(text, 'results', 'intel table 2', 'intel');
  assert.equal(again.match(/Intel hosts/g)?.length, 1);
  assert.match(again, /intel table 2/);
  assert.doesNotMatch(again, /intel table\n/);
});

test('a section without a kind is replaced between its own markers, and missing markers are an error', () => {
  assert.match(replaceSection(DOC, 'ledger', 'new ledger'), /ledger:start -->\nnew ledger\n<!-- bench:ledger:end/);
  assert.throws(() => replaceSection(DOC, 'sweep', 'x'), /markers/);
});

test('docs/benchmarks.md has the AMD table and the place for other kinds', () => {
  const text = readFileSync(new URL('../../docs/benchmarks.md', import.meta.url), 'utf8');
  for (const marker of ['bench:results-amd:start', 'bench:results-amd:end', 'bench:results:new-host-kinds']) assert.ok(text.includes(marker), marker);
});
