// The one line each request writes when its answer ends (metrics.ts), a metered call's hold end
// riding in it. On a busy gateway most lines are these, so for a logger that gatewayLogger() made
// the line is written from a template: the bytes pino writes for the same fields, without pino's
// walk of a merged object, its redaction pass (this line's fields are fixed and typed below; no
// header, no caller's object can ride in it) or its serializers. Any other logger gets the same
// fields through `log.info`.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { pino } from 'pino';
import type { HoldLogFields } from '../pipeline/types.js';
import { bindingsText } from './request-logger.js';

export interface RequestLine {
  method: string;
  /** The path, without its query (a query may carry a key's name or a caller's text). */
  url: string;
  statusCode: number;
  /** Whether the whole answer was written (false: the caller left, or the stream broke). */
  complete: boolean;
  responseTimeMs: number;
  hold: HoldLogFields | undefined;
}

export type RequestLineWriter = (request: FastifyRequest, line: RequestLine) => void;

const MESSAGE = 'request completed';
const INFO = 30;

/** Loggers whose request lines are written from the template, and where their lines go. */
const templated = new WeakMap<object, pino.DestinationStream>();

/**
 * Marks `logger` (pino, with pino's default line format: `msg`, epoch `time`, no formatters, mixin
 * or nested key) as written to `destination`: its request lines then skip pino (see above).
 */
export function templateRequestLines(logger: pino.Logger, destination: pino.DestinationStream): void {
  templated.set(logger, destination);
}

/** How `logger`'s requests write their line: the template when templateRequestLines marked it, else `log.info`. */
export function requestLineWriter(logger: FastifyBaseLogger): RequestLineWriter {
  const destination = templated.get(logger);
  if (!destination) return (request, line) => request.log.info(asFields(line), MESSAGE);
  return (request, line) => {
    if ((request.log as pino.Logger).levelVal > INFO) return; // the request's own level (a route may set one)
    // `,"pid":…,"hostname":"…","reqId":"…"` and any binding added since (a caller's x-request-id):
    // what pino puts after the time on every line of the request's logger.
    const bindings = bindingsText(request.log);
    destination.write(formatRequestLine(Date.now(), bindings ?? `,"reqId":${text(request.id)}`, line));
  };
}

/** The line as pino writes it for asFields(line) from a logger whose bindings are `bindings`. */
export function formatRequestLine(time: number, bindings: string, line: RequestLine): string {
  const request = `"req":{"method":${text(line.method)},"url":${text(line.url)}}`;
  const response = `"res":{"statusCode":${number(line.statusCode)},"complete":${line.complete}}`;
  const hold = line.hold ? holdFields(line.hold) : '';
  return `{"level":${INFO},"time":${time}${bindings},${request},${response},"responseTimeMs":${number(line.responseTimeMs)}${hold},"msg":"${MESSAGE}"}\n`;
}

/** The fields `log.info` is given: the same keys in the same order as the template writes. */
export function asFields(line: RequestLine): object {
  return {
    req: { method: line.method, url: line.url },
    res: { statusCode: line.statusCode, complete: line.complete },
    responseTimeMs: line.responseTimeMs,
    ...line.hold,
  };
}

function holdFields(hold: HoldLogFields): string {
  let out = `,"holdId":${text(hold.holdId)},"model":${text(hold.model)},"bill":${text(hold.bill)},"reason":${text(hold.reason)}`;
  if (hold.units !== undefined) out += `,"units":${JSON.stringify(hold.units)}`;
  if (hold.chargeMicros !== undefined) out += `,"chargeMicros":${number(hold.chargeMicros)}`;
  if (hold.channel !== undefined) out += `,"channel":${text(hold.channel)}`;
  if (hold.channelKey !== undefined) out += `,"channelKey":${text(hold.channelKey)}`;
  if (hold.attempts !== undefined) out += `,"attempts":${number(hold.attempts)}`;
  return `${out},"landed":${hold.landed}`;
}

const text = (value: string) => JSON.stringify(value);
// As pino writes a number: one that is not finite as null.
const number = (value: number) => (Number.isFinite(value) ? String(value) : 'null');
