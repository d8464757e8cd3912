// The request's log line written from a template is the line pino writes for the same fields.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { gatewayLogger } from '../../src/cli/logger.js';
import { asFields, type RequestLine, requestLineWriter } from '../../src/http/request-line.js';

const settled: RequestLine = {
  method: 'POST',
  url: '/v1/chat/completions',
  statusCode: 200,
  complete: true,
  responseTimeMs: 3.2,
  hold: {
    holdId: 'hold_01HZX',
    model: 'sandbox-chat',
    bill: 'settle',
    reason: 'answered',
    units: { input_token: 12, output_token: 64 },
    chargeMicros: 1234,
    channel: 'sandbox-openai',
    channelKey: 'key "two" \\ é',
    attempts: 2,
    landed: true,
  },
};
const released: RequestLine = {
  ...settled,
  statusCode: 502,
  complete: true,
  hold: { holdId: 'hold_02', model: 'm\n"x"', bill: 'release', reason: 'upstream failed', landed: false },
};
const noHold: RequestLine = { method: 'GET', url: '/v1/models', statusCode: 401, complete: false, responseTimeMs: 0.4, hold: undefined };

/** A logger of the gateway's, and the lines it wrote. */
function capture(level = 'info') {
  const lines: string[] = [];
  const logger = gatewayLogger(level, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

const requestOf = (logger: pino.Logger, id: string) => ({ id, log: logger.child({ reqId: id }) }) as unknown as FastifyRequest;
const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

describe('the request log line', () => {
  for (const [name, line] of [
    ['a settled hold with every field', settled],
    ['a released hold without units or channel', released],
    ['no hold', noHold],
  ] as const) {
    test(`with ${name}, the template writes the bytes pino writes for the same fields`, () => {
      const { logger, lines } = capture();
      const request = requestOf(logger, 'req_abc');
      requestLineWriter(logger)(request, line);
      request.log.info(asFields(line), 'request completed');
      assert.equal(lines.length, 2);
      assert.equal(withoutTime(lines[0]!), withoutTime(lines[1]!));
      assert.equal(JSON.parse(lines[0]!).reqId, 'req_abc');
    });
  }

  test("a binding added to the request's logger (a caller's x-request-id) is on its line, as pino writes it", () => {
    const { logger, lines } = capture();
    const request = requestOf(logger, 'req_z');
    request.log = request.log.child({ clientRequestId: 'trace-123' });
    requestLineWriter(logger)(request, settled);
    request.log.info(asFields(settled), 'request completed');
    assert.equal(JSON.parse(lines[0]!).clientRequestId, 'trace-123');
    assert.equal(withoutTime(lines[0]!), withoutTime(lines[1]!));
  });

  test('a logger set above info writes no request line', () => {
    const { logger, lines } = capture('warn');
    requestLineWriter(logger)(requestOf(logger, 'req_x'), settled);
    assert.deepEqual(lines, []);
  });

  test('a logger the gateway did not make writes the line through its own info', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info', messageKey: 'message' }, { write: (line: string) => void lines.push(line) });
    requestLineWriter(logger)(requestOf(logger, 'req_y'), settled);
    assert.equal(lines.length, 1);
    const written = JSON.parse(lines[0]!);
    assert.equal(written.message, 'request completed');
    assert.equal(written.chargeMicros, 1234);
    assert.deepEqual(written.req, { method: 'POST', url: '/v1/chat/completions' });
  });
});
