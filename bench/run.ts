// `npm run bench`: each scenario called directly on the sandbox and through the gateway in the same
// run, reported as ratios (gateway / direct), never as absolute pass/fail timings. The sandbox and
// the gateway run as separate processes; this process is only the client.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool, request } from 'undici';
import { sandboxCatalogue } from '../src/config/sandbox-catalogue.js';
import { runLoad, summarize, type BenchRequest, type LatencySummary, type LoadOptions } from './load.js';
import { cpuTimeMs, freePort, rssBytes, startTollroute, type BenchChild } from './processes.js';

const CONNECTIONS = 32;
const CONCURRENCY = 16;
const WARMUP = { count: 300, maxMs: 3_000 };
const MEASURE_MAX_MS = 8_000;
const MAX_ERROR_RATE = 0.01;
const CREDIT_MICROS = 1_000_000_000_000; // a million units: no request in the run is refused for money
const SANDBOX_KEY = 'sk-sandbox'; // what the catalogue's channels send; the sandbox accepts any key
const RESULTS_FILE = path.join(os.tmpdir(), 'tollroute-bench', 'latest.json');

interface Scenario {
  name: string;
  /** What "direct" is, when it is not the very same call. */
  baseline: string;
  count: number;
  concurrency: number;
  direct: BenchRequest;
  gateway: BenchRequest;
}

const json = (value: unknown) => JSON.stringify(value);
const chatBody = (content: string, stream: boolean) =>
  // include_usage on both sides: the gateway always asks the upstream for it, so the sandbox does the same work either way
  json({ model: 'sandbox-chat', messages: [{ role: 'user', content }], ...(stream && { stream: true, stream_options: { include_usage: true } }) });
const messagesBody = (model: string) => json({ model, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'tell me a story [[words:200]]' }] });
const SPEECH_BODY = json({
  user: { uid: 'bench' },
  req_params: {
    text: 'The gateway passes speech through as it arrives. Each sentence is its own audio. The last line carries the usage.',
    speaker: 'bench_speaker',
    audio_params: { format: 'mp3', sample_rate: 24000 },
  },
});

function scenarios(key: string): Scenario[] {
  const sandboxJson = { 'content-type': 'application/json' };
  const gatewayJson = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const openAiDirect = { ...sandboxJson, authorization: `Bearer ${SANDBOX_KEY}` };
  const messagesDirect = { ...sandboxJson, 'x-api-key': SANDBOX_KEY, 'anthropic-version': '2023-06-01' };
  const messagesGateway = { ...gatewayJson, 'anthropic-version': '2023-06-01' };
  const plainChat = chatBody('hello, how are you today?', false);
  const streamedChat = chatBody('tell me a story [[words:200]]', true);
  const chat = (body: string, endMarker: string) => ({
    direct: { path: '/v1/chat/completions', headers: openAiDirect, body, endMarker },
    gateway: { path: '/v1/chat/completions', headers: gatewayJson, body, endMarker },
  });
  const messagesDirectCall = { path: '/v1/messages', headers: messagesDirect, body: messagesBody('sandbox-claude'), endMarker: 'message_stop' };
  return [
    { name: 'chat, plain', baseline: 'same call', count: 3_000, concurrency: CONCURRENCY, ...chat(plainChat, '"finish_reason"') },
    { name: 'chat, plain, one at a time', baseline: 'same call', count: 500, concurrency: 1, ...chat(plainChat, '"finish_reason"') },
    { name: 'chat, streamed, 200 words', baseline: 'same call', count: 1_000, concurrency: CONCURRENCY, ...chat(streamedChat, 'data: [DONE]') },
    { name: 'chat, streamed, one at a time', baseline: 'same call', count: 300, concurrency: 1, ...chat(streamedChat, 'data: [DONE]') },
    {
      name: 'messages, streamed, translated',
      baseline: "sandbox's own messages stream (same text); gateway: sandbox-chat via chat completions",
      count: 1_000,
      concurrency: CONCURRENCY,
      direct: messagesDirectCall,
      gateway: { path: '/v1/messages', headers: messagesGateway, body: messagesBody('sandbox-chat'), endMarker: 'message_stop' },
    },
    {
      name: 'messages, streamed, native',
      baseline: 'same call; gateway: sandbox-claude passed through',
      count: 1_000,
      concurrency: CONCURRENCY,
      direct: messagesDirectCall,
      gateway: { path: '/v1/messages', headers: messagesGateway, body: messagesBody('sandbox-claude'), endMarker: 'message_stop' },
    },
    {
      name: 'speech, NDJSON stream',
      baseline: 'same call',
      count: 1_500,
      concurrency: CONCURRENCY,
      direct: {
        path: '/api/v3/tts/unidirectional',
        headers: { ...sandboxJson, 'x-api-key': SANDBOX_KEY, 'x-api-resource-id': 'volc.service_type.10029', 'x-control-require-usage-tokens-return': 'text_words' },
        body: SPEECH_BODY,
        endMarker: '20000000',
      },
      gateway: { path: '/v1/audio/speech/unidirectional?model=sandbox-tts', headers: gatewayJson, body: SPEECH_BODY, endMarker: '20000000' },
    },
  ];
}

interface SideResult {
  sent: number;
  errors: number;
  errorRate: number;
  firstError: string | undefined;
  requestsPerSecond: number;
  lastByteMs: LatencySummary;
  firstByteMs: LatencySummary;
  gatewayCpuMsPerRequest: number | null;
  sandboxCpuMsPerRequest: number | null;
  gatewayRssBytes: { before: number | null; after: number | null };
}

interface ScenarioResult {
  name: string;
  baseline: string;
  concurrency: number;
  direct: SideResult;
  gateway: SideResult;
  /** gateway / direct: above 1 is slower for latencies, below 1 is slower for throughput. */
  ratio: { p50: number; p95: number; p99: number; firstByteP50: number; requestsPerSecond: number };
  addedMs: { p50: number; firstByteP50: number };
}

interface Children {
  sandbox: BenchChild;
  gateway: BenchChild;
  /** Rejects when a child dies or the bench is interrupted: every wait races it. */
  broken: Promise<never>;
}

const perRequest = (before: number | null, after: number | null, count: number) =>
  before === null || after === null || count === 0 ? null : (after - before) / count;

/** Warm-up, then the measured run, with both children's CPU read around the measured part only. */
async function measure(pool: Pool, call: BenchRequest, options: Omit<LoadOptions, 'maxMs'>, children: Children): Promise<SideResult> {
  const { gateway, sandbox, broken } = children;
  await Promise.race([runLoad(pool, call, { count: WARMUP.count, concurrency: options.concurrency, maxMs: WARMUP.maxMs }), broken]);
  const cpuBefore = { gateway: cpuTimeMs(gateway.pid), sandbox: cpuTimeMs(sandbox.pid) };
  const rssBefore = rssBytes(gateway.pid);
  const load = await Promise.race([runLoad(pool, call, { ...options, maxMs: MEASURE_MAX_MS }), broken]);
  const ok = load.lastByteMs.length;
  return {
    sent: load.sent,
    errors: load.errors,
    errorRate: load.sent === 0 ? 1 : load.errors / load.sent,
    firstError: load.firstError,
    requestsPerSecond: ok / (load.elapsedMs / 1000),
    lastByteMs: summarize(load.lastByteMs),
    firstByteMs: summarize(load.firstByteMs),
    gatewayCpuMsPerRequest: perRequest(cpuBefore.gateway, cpuTimeMs(gateway.pid), load.sent),
    sandboxCpuMsPerRequest: perRequest(cpuBefore.sandbox, cpuTimeMs(sandbox.pid), load.sent),
    gatewayRssBytes: { before: rssBefore, after: rssBytes(gateway.pid) },
  };
}

async function runScenario(scenario: Scenario, pools: { sandbox: Pool; gateway: Pool }, children: Children): Promise<ScenarioResult> {
  const options = { count: scenario.count, concurrency: scenario.concurrency };
  const direct = await measure(pools.sandbox, scenario.direct, options, children);
  const gateway = await measure(pools.gateway, scenario.gateway, options, children);
  return {
    name: scenario.name,
    baseline: scenario.baseline,
    concurrency: scenario.concurrency,
    direct,
    gateway,
    ratio: {
      p50: gateway.lastByteMs.p50 / direct.lastByteMs.p50,
      p95: gateway.lastByteMs.p95 / direct.lastByteMs.p95,
      p99: gateway.lastByteMs.p99 / direct.lastByteMs.p99,
      firstByteP50: gateway.firstByteMs.p50 / direct.firstByteMs.p50,
      requestsPerSecond: gateway.requestsPerSecond / direct.requestsPerSecond,
    },
    addedMs: { p50: gateway.lastByteMs.p50 - direct.lastByteMs.p50, firstByteP50: gateway.firstByteMs.p50 - direct.firstByteMs.p50 },
  };
}

async function adminCall<T>(gatewayUrl: string, adminToken: string, p: string, body: unknown): Promise<T> {
  const response = await request(gatewayUrl + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`POST ${p}: ${response.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

// ── output ────────────────────────────────────────────────────────────────────────────────────

const ms = (value: number | null) => (value === null || Number.isNaN(value) ? 'n/a' : value.toFixed(2));
const times = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
const signed = (value: number) => (Number.isNaN(value) ? 'n/a' : `${value >= 0 ? '+' : ''}${value.toFixed(2)}`);
const mb = (bytes: number | null) => (bytes === null ? 'n/a' : (bytes / 1024 / 1024).toFixed(0));

function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function report(results: ScenarioResult[]): string {
  const latencies = formatTable(
    ['scenario', 'target', 'c', 'n', 'err', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'ttfb p50', 'gateway CPU ms/req', 'sandbox CPU ms/req'],
    results.flatMap((r) =>
      (['direct', 'gateway'] as const).map((side) => {
        const s = r[side];
        return [
          side === 'direct' ? r.name : '', side, String(r.concurrency), String(s.sent), String(s.errors), s.requestsPerSecond.toFixed(0),
          ms(s.lastByteMs.p50), ms(s.lastByteMs.p95), ms(s.lastByteMs.p99), ms(s.firstByteMs.p50),
          side === 'gateway' ? ms(s.gatewayCpuMsPerRequest) : '', ms(s.sandboxCpuMsPerRequest),
        ];
      }),
    ),
  );
  const ratios = formatTable(
    ['gateway / direct', 'p50', 'p95', 'p99', 'ttfb p50', 'req/s', 'added p50 ms', 'added ttfb ms', 'gateway RSS MB'],
    results.map((r) => [
      r.name, times(r.ratio.p50), times(r.ratio.p95), times(r.ratio.p99), times(r.ratio.firstByteP50), times(r.ratio.requestsPerSecond),
      signed(r.addedMs.p50), signed(r.addedMs.firstByteP50), `${mb(r.gateway.gatewayRssBytes.before)} → ${mb(r.gateway.gatewayRssBytes.after)}`,
    ]),
  );
  const baselines = results.filter((r) => r.baseline !== 'same call').map((r) => `  ${r.name}: direct = ${r.baseline}`);
  return [latencies, '', ratios, ...(baselines.length ? ['', 'baselines:', ...baselines] : [])].join('\n');
}

// ── main ──────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<number> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollroute-bench-'));
  const started: BenchChild[] = [];
  const pools: Pool[] = [];
  // Interrupted: the running phase stops at once, and the children are stopped by the `finally` below.
  let interruptedBy: string | undefined;
  const interrupted = new Promise<never>((_, reject) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        interruptedBy ??= signal;
        reject(new Error(`interrupted by ${signal}`));
      });
    }
  });
  interrupted.catch(() => {});

  try {
    const [sandboxPort, gatewayPort] = [await freePort(), await freePort()];
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const adminToken = `adm-bench-${randomBytes(16).toString('hex')}`;
    const configFile = path.join(dataDir, 'tollroute.json'); // JSON is YAML, so `--config` reads it
    writeFileSync(configFile, JSON.stringify({
      ...sandboxCatalogue(sandboxUrl),
      host: '127.0.0.1',
      port: gatewayPort,
      admin_token: adminToken,
      log_level: 'warn',
      data_dir: dataDir,
      store: `sqlite:${path.join(dataDir, 'tollroute.db')}`,
      sandbox: { port: sandboxPort },
      limits: { default_rpm: 1_000_000_000 },
      network: { allow_private_urls: true },
    }));

    const sandbox = await startTollroute('sandbox', ['sandbox', '--config', configFile]);
    started.push(sandbox);
    const gateway = await startTollroute('gateway', ['serve', '--config', configFile]);
    started.push(gateway);
    const broken = Promise.race([sandbox.died, gateway.died, interrupted]);
    broken.catch(() => {});
    const children = { sandbox, gateway, broken };

    const account = await adminCall<{ id: string }>(gatewayUrl, adminToken, '/admin/accounts', { name: 'bench', credit_micros: CREDIT_MICROS });
    const { key } = await adminCall<{ key: string }>(gatewayUrl, adminToken, `/admin/accounts/${account.id}/keys`, { name: 'bench' });

    const poolOptions = { connections: CONNECTIONS, keepAliveTimeout: 30_000, headersTimeout: 15_000, bodyTimeout: 15_000 };
    const sandboxPool = new Pool(sandboxUrl, poolOptions);
    const gatewayPool = new Pool(gatewayUrl, poolOptions);
    pools.push(sandboxPool, gatewayPool);

    process.stdout.write(`tollroute bench: node ${process.version}, ${os.cpus().length} CPUs, sandbox pid ${sandbox.pid}, gateway pid ${gateway.pid}\n`);
    const results: ScenarioResult[] = [];
    for (const scenario of scenarios(key)) {
      process.stdout.write(`  ${scenario.name}…\n`);
      results.push(await runScenario(scenario, { sandbox: sandboxPool, gateway: gatewayPool }, children));
    }

    process.stdout.write(`\n${report(results)}\n`);
    mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    writeFileSync(RESULTS_FILE, `${JSON.stringify({
      at: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      connections: CONNECTIONS,
      warmup: WARMUP,
      measureMaxMs: MEASURE_MAX_MS,
      scenarios: results,
    }, null, 2)}\n`);
    process.stdout.write(`\nresults written to ${RESULTS_FILE}\n`);

    const failing = results.flatMap((r) =>
      (['direct', 'gateway'] as const)
        .filter((side) => r[side].errorRate > MAX_ERROR_RATE)
        .map((side) => `${r.name} (${side}): ${r[side].errors}/${r[side].sent} failed, first: ${r[side].firstError}`),
    );
    if (failing.length > 0) {
      process.stderr.write(`bench: error rate above ${MAX_ERROR_RATE * 100}%:\n  ${failing.join('\n  ')}\n`);
      return 1;
    }
    return 0;
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    return interruptedBy ? 130 : 1;
  } finally {
    await Promise.allSettled(pools.map((pool) => pool.destroy()));
    await Promise.allSettled(started.map((child) => child.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
