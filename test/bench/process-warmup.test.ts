import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ScenarioMeasurer } from '../../bench/measure.js';
import type { BenchChild } from '../../bench/processes.js';
import { type BenchRequest, type Scenario, TARGETS, type TargetName } from '../../bench/scenarios.js';
import type { Targets } from '../../bench/targets.js';

/** Three stand-in targets in this process: each counts the calls it got by path; /fail fails always, /flaky after its first call. */
const calls: Record<TargetName, Map<string, number>> = { direct: new Map(), floor: new Map(), gateway: new Map() };
const servers: Server[] = [];
let targets: Targets;

const request = (path: string): BenchRequest => ({ method: 'POST', path, headers: {}, body: '{}', endMarker: 'done' });
const scenario = (name: string, connections: number, path = `/${name}`): Scenario => ({
  name,
  connections,
  upstream: request(path),
  gateway: request(path),
});

function measurer(processWarmupSeconds: number) {
  const settings = { rounds: 1, seconds: 1, warmupSeconds: 1, processWarmupSeconds, ttfbSeconds: 0.1, wrkThreads: 1, wrk: null, workDir: '/tmp' };
  return new ScenarioMeasurer(targets, settings, () => {});
}

before(async () => {
  const urls = {} as Record<TargetName, string>;
  for (const target of TARGETS) {
    const server = createServer((req, res) => {
      req.resume();
      const count = (calls[target].get(req.url!) ?? 0) + 1;
      calls[target].set(req.url!, count);
      const fails = req.url === '/fail' || (req.url === '/flaky' && count > 1);
      res.writeHead(fails ? 500 : 200).end('done');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    urls[target] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const self = { pid: process.pid } as BenchChild; // the CPU read is this process's: a figure, not checked here
  const broken = new Promise<never>(() => {});
  targets = {
    sandbox: self,
    processes: { direct: self, floor: self, gateway: self },
    urls,
    gatewayKey: '',
    gatewayLogFile: '/nonexistent',
    broken,
    stop: async () => {},
  };
});

after(() => {
  for (const server of servers) server.close();
});

describe('the bench warms every fresh target before its first round', () => {
  it("loads each target with each scenario's call, and reports the first scenario's CPU a call", async () => {
    for (const target of TARGETS) calls[target].clear();
    const cold = await measurer(0.2).warmUpProcesses([scenario('one', 1), scenario('two', 4)]);
    for (const target of TARGETS) {
      assert.ok((calls[target].get('/one') ?? 0) > 0, `${target} got the first scenario's call`);
      assert.ok((calls[target].get('/two') ?? 0) > 0, `${target} got the second scenario's call`);
      assert.equal(typeof cold[target], 'number');
    }
  });

  it('loads nothing when its time is 0', async () => {
    for (const target of TARGETS) calls[target].clear();
    const cold = await measurer(0).warmUpProcesses([scenario('one', 1)]);
    for (const target of TARGETS) {
      assert.equal(calls[target].size, 0);
      assert.equal(cold[target], null);
    }
  });

  it("stops the bench before any load, naming the target, when a scenario's call is not answered whole", async () => {
    for (const target of TARGETS) calls[target].clear();
    await assert.rejects(
      measurer(0.2).warmUpProcesses([scenario('fine', 1), scenario('broken', 1, '/fail')]),
      /broken: direct did not answer as expected: status 500/,
    );
    assert.equal(calls.gateway.get('/fine'), 1, 'the checks came first: one call each, no load');
  });

  it('stops the bench, naming the scenario, when a warm-up call fails', async () => {
    for (const target of TARGETS) calls[target].clear();
    await assert.rejects(measurer(0.2).warmUpProcesses([scenario('flaky', 1, '/flaky')]), /flaky: \d+ of \d+ warm-up requests to direct failed/);
  });
});
