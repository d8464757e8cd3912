// Each request's logger (request.log), made only when something logs through it. Fastify's own
// factory makes a pino child per request, its bindings serialized at once (about 1 % of a plain
// call's CPU, measured with perf), while nearly every request of a busy gateway logs nothing but its
// request line, which request-line.ts writes from a template that needs only the bindings' text.
import type { FastifyBaseLogger } from 'fastify';
import { type Bindings, type ChildLoggerOptions, type LogFn, pino } from 'pino';

const { chindingsSym } = pino.symbols;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
/** pino's text of a logger's bindings, `,"pid":…,"reqId":"…"` (undefined: not a pino logger). */
export const bindingsText = (logger: FastifyBaseLogger) => (logger as unknown as Record<symbol, string | undefined>)[chindingsSym];

/** request.log: the pino child it stands for, made the first time anything but the request line needs it. */
export class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  get #logger(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }

  get level() {
    return (this.#child ?? this.#parent).level;
  }
  set level(level) {
    this.#logger.level = level;
  }
  /** pino's number for the level, which the request line reads. */
  get levelVal(): number {
    return ((this.#child ?? this.#parent) as pino.Logger).levelVal;
  }
  /**
   * The text pino writes after the time on each of this logger's lines (`,"pid":…,"reqId":"…"`), as
   * the child would have it; undefined when the parent is not pino's. String values only: anything
   * else is the child's to serialize.
   */
  get [chindingsSym](): string | undefined {
    let text = bindingsText(this.#child ?? this.#parent);
    if (this.#child || text === undefined) return text;
    for (const key in this.#bindings) {
      const value = this.#bindings[key];
      if (typeof value !== 'string') return bindingsText(this.#logger);
      text += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    }
    return text;
  }

  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  // One method per level on the prototype, not arrow fields: a request's logger is one small object.
  static {
    for (const level of LEVELS) {
      LazyRequestLogger.prototype[level] = function (this: LazyRequestLogger, ...args: Parameters<LogFn>) {
        this.#logger[level](...args);
      };
    }
  }
  silent() {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a lazy logger, unless the route sets options of its own (a level, serializers). */
export function lazyRequestLoggers(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  for (const _ in options) return logger.child(bindings, options); // any option at all (no array of keys per request)
  return new LazyRequestLogger(logger, bindings);
}
