// request.log is made only when something logs through it: a request that writes nothing but its
// request line never makes a pino child, and one that logs gets the child Fastify would have made.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import type { pino } from 'pino';
import { gatewayLogger } from '../../src/cli/logger.js';
import { asFields, type RequestLine, requestLineWriter } from '../../src/http/request-line.js';
import { LazyRequestLogger, lazyRequestLoggers } from '../../src/http/request-logger.js';

const line: RequestLine = { method: 'POST', url: '/v1/chat/completions', statusCode: 200, complete: true, responseTimeMs: 1.5, hold: undefined };
const withoutTime = (text: string) => text.replace(/"time":\d+/, '"time":0');

/**
 * A gateway logger whose lines are kept, counting the children made of it. (The count replaces its
 * own `child`, which its children inherit: a child's child is then made from it, not from the child.)
 */
function counted(level = 'info') {
  const lines: string[] = [];
  const logger = gatewayLogger(level, { write: (text: string) => void lines.push(text) });
  const made = { children: 0 };
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<pino.Logger['child']>) => {
    made.children++;
    return child(...args);
  }) as pino.Logger['child'];
  return { logger, lines, made };
}

test('a request that writes only its request line makes no child, and the line is the bytes the child would write', () => {
  const { logger, lines, made } = counted();
  const request = { id: 'req_lazy', log: new LazyRequestLogger(logger, { reqId: 'req_lazy' }) } as unknown as FastifyRequest;
  requestLineWriter(logger)(request, line);
  assert.equal(made.children, 0);
  logger.child({ reqId: 'req_lazy' }).info(asFields(line), 'request completed');
  assert.equal(withoutTime(lines[0]!), withoutTime(lines[1]!));
});

test("the first line a request logs itself makes the child once, with the request's bindings", () => {
  const { logger, lines, made } = counted();
  const log = new LazyRequestLogger(logger, { reqId: 'req_1' });
  log.warn({ attempt: 1 }, 'first');
  log.error('second');
  assert.equal(made.children, 1);
  assert.deepEqual(
    lines.map((text) => JSON.parse(text)).map(({ reqId, msg, attempt, level }) => ({ reqId, msg, attempt, level })),
    [
      { reqId: 'req_1', msg: 'first', attempt: 1, level: 40 },
      { reqId: 'req_1', msg: 'second', attempt: undefined, level: 50 },
    ],
  );
});

test("a child of it carries the request's bindings and its own, and the request line then reads them", () => {
  const lines: string[] = [];
  const logger = gatewayLogger('info', { write: (text: string) => void lines.push(text) });
  const log = new LazyRequestLogger(logger, { reqId: 'req_2' }).child({ clientRequestId: 'caller-7' });
  log.info('hello');
  requestLineWriter(logger)({ id: 'req_2', log } as unknown as FastifyRequest, line);
  for (const text of lines) assert.deepEqual([JSON.parse(text).reqId, JSON.parse(text).clientRequestId], ['req_2', 'caller-7']);
});

test("below the logger's level it writes nothing, its request line included, and makes no child", () => {
  const { logger, lines, made } = counted('warn');
  const log = new LazyRequestLogger(logger, { reqId: 'req_3' });
  requestLineWriter(logger)({ id: 'req_3', log } as unknown as FastifyRequest, line);
  assert.equal(log.level, 'warn');
  assert.deepEqual([lines.length, made.children], [0, 0]);
});

test("a route's own logger options make the child at once, with them", () => {
  const { logger, made } = counted();
  const log = lazyRequestLoggers(logger, { reqId: 'req_4' }, { level: 'error' });
  assert.equal(log instanceof LazyRequestLogger, false);
  assert.deepEqual([log.level, made.children], ['error', 1]);
});
