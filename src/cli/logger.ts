// The gateway's logger (serve, and the tests' gateways): pino, the paths where a secret could show
// redacted, and each request's line written from a template (http/request-line.ts).
import { pino } from 'pino';
import { templateRequestLines } from '../http/request-line.js';

// Secrets never reach the logs: auth headers are redacted should anything log a request's headers.
const REDACT = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'headers.authorization'];

export function gatewayLogger(level: string, destination: pino.DestinationStream): pino.Logger {
  const logger = pino({ level, redact: REDACT }, destination);
  templateRequestLines(logger, destination);
  return logger;
}
