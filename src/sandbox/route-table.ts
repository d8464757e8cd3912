import { chatRoute } from './chat.js';
import { messagesRoute } from './messages.js';
import { noResponsesRoute, responsesRoute } from './responses.js';
import type { SandboxRoute } from './route.js';

/**
 * The same protocol under /noresponses: an upstream that serves chat completions but not the
 * responses API (the catalogue's sandbox-chat-noresponses channel points there).
 */
const withoutResponses = (route: SandboxRoute): SandboxRoute => ({ ...route, path: `/noresponses${route.path}` });

/** Every upstream endpoint the sandbox imitates: a new protocol is one file and one line here. */
export const SANDBOX_ROUTES: readonly SandboxRoute[] = [
  chatRoute,
  messagesRoute,
  responsesRoute,
  withoutResponses(chatRoute),
  noResponsesRoute,
];
