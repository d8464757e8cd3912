// The package entry: what a webhook receiver imports to check a tollroute callback.
//   import { verifyWebhook } from 'tollroute';
//   if (!verifyWebhook(secret, req.headers, rawBody)) return res.writeHead(401).end();
export { signWebhook, WEBHOOK_HEADERS } from './webhooks/sign.js';
export { DEFAULT_TOLERANCE_SECONDS, verifyWebhook, type WebhookHeaders } from './webhooks/verify.js';
