// The per-call counters and histograms write /metrics exactly as prom-client's own would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { CallCounter, CallHistogram } from '../../src/http/metric-series.js';

const buckets = [0.005, 0.01, 0.05, 0.1, 0.5, 1];
const observations: [string, string, number][] = [
  ['POST', '/v1/chat/completions', 0.003],
  ['POST', '/v1/chat/completions', 0.005],
  ['GET', '/v1/models', 0.07],
  ['POST', '/v1/chat/completions', 0.2],
  ['POST', 'a "quoted"\\route\n', 3],
  ['GET', '/v1/models', 0.0051],
];

describe('the per-call metric series', () => {
  test('a histogram writes the buckets, sum and count that prom-client writes for the same observations', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Histogram({ name: 'h_seconds', help: 'help', labelNames: ['method', 'route'], buckets, registers: [theirs] });
    const mine = new CallHistogram({ name: 'h_seconds', help: 'help', labelNames: ['method', 'route'], buckets, registers: [ours] });
    for (const [method, route, seconds] of observations) {
      reference.observe({ method, route }, seconds);
      mine.observe([method, route], seconds);
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
  });

  test('a histogram without labels writes what prom-client writes', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Histogram({ name: 'g_seconds', help: 'gateway time', buckets, registers: [theirs] });
    const mine = new CallHistogram({ name: 'g_seconds', help: 'gateway time', buckets, registers: [ours] });
    for (const [, , seconds] of observations) {
      reference.observe(seconds);
      mine.observe([], seconds);
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
  });

  test('before any observation, metrics with and without labels write what prom-client writes', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    new Histogram({ name: 'g_seconds', help: 'gateway time', buckets, registers: [theirs] });
    new Histogram({ name: 'h_seconds', help: 'by route', labelNames: ['route'], buckets, registers: [theirs] });
    new Counter({ name: 'c_total', help: 'calls', registers: [theirs] });
    new CallHistogram({ name: 'g_seconds', help: 'gateway time', buckets, registers: [ours] });
    new CallHistogram({ name: 'h_seconds', help: 'by route', labelNames: ['route'], buckets, registers: [ours] });
    new CallCounter({ name: 'c_total', help: 'calls', registers: [ours] });
    assert.equal(await ours.metrics(), await theirs.metrics());
  });

  test('a counter writes the totals that prom-client writes for the same increments', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Counter({ name: 'c_total', help: 'calls', labelNames: ['method', 'route', 'status'], registers: [theirs] });
    const mine = new CallCounter({ name: 'c_total', help: 'calls', labelNames: ['method', 'route', 'status'], registers: [ours] });
    for (const [method, route, seconds] of observations) {
      const status = seconds > 1 ? '502' : '200';
      reference.inc({ method, route, status }, 7);
      mine.inc([method, route, status], 7);
    }
    reference.inc({ method: 'GET', route: '/v1/models', status: '200' });
    mine.inc(['GET', '/v1/models', '200']);
    assert.equal(await ours.metrics(), await theirs.metrics());
  });

  test('a call with the wrong number of label values is refused', () => {
    const mine = new CallCounter({ name: 'x_total', help: 'x', labelNames: ['channel', 'outcome'], registers: [] });
    assert.throws(() => mine.inc(['only-one']), /expected 2 label values/);
  });

  test('a counter never goes down', () => {
    const mine = new CallCounter({ name: 'y_total', help: 'y', labelNames: ['model'], registers: [] });
    assert.throws(() => mine.inc(['m'], -1), /at least 0/);
    assert.throws(() => mine.inc(['m'], Number.NaN), /at least 0/);
  });

  test('a reset registry writes no series', async () => {
    const ours = new Registry();
    const mine = new CallHistogram({ name: 'z_seconds', help: 'z', labelNames: ['channel'], buckets, registers: [ours] });
    mine.observe(['a'], 1);
    ours.resetMetrics();
    assert.doesNotMatch(await ours.metrics(), /z_seconds_count/);
  });
});
