// Azure OpenAI (provider-formats.md, Azure OpenAI): OpenAI's bodies and answers at Azure's paths,
// the key in `api-key`. A deployment path names the model by its deployment and needs an
// `api-version`, as does the responses path (its model field names the deployment); the v1 paths
// take the body's own model. Answered by the OpenAI routes' handlers.
import { openAiError } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { isRecord } from './text.js';

const NO_KEY = openAiError('Access denied due to missing subscription key: send it in the api-key header', 'invalid_request_error', '401');

export function azureRoute(openAi: SandboxRoute, path: string): SandboxRoute {
  const byDeployment = path.includes('/:deployment/');
  // Every path but the v1 ones is versioned.
  const needsVersion = !path.startsWith('/openai/v1/');
  return {
    ...openAi,
    kind: 'azure',
    path,
    handle(ctx: SandboxContext) {
      const key = ctx.headers['api-key'];
      if (typeof key !== 'string' || key === '') return ctx.reply.json(401, NO_KEY);
      if (needsVersion && !ctx.query.get('api-version')) {
        return ctx.reply.json(404, openAiError('Resource not found: an api-version query parameter is required', 'invalid_request_error', '404'));
      }
      // The OpenAI handler's own checks pass on the key Azure took in its own header.
      const headers = { ...ctx.headers, authorization: `Bearer ${key}` };
      const body = byDeployment && isRecord(ctx.body) ? { ...ctx.body, model: ctx.params.deployment } : ctx.body;
      return openAi.handle({ ...ctx, headers, body });
    },
  };
}

export const azureRoutes = (chat: SandboxRoute, responses: SandboxRoute): SandboxRoute[] => [
  azureRoute(chat, '/openai/deployments/:deployment/chat/completions'),
  azureRoute(chat, '/openai/v1/chat/completions'),
  azureRoute(responses, '/openai/v1/responses'),
  azureRoute(responses, '/openai/responses'),
];
