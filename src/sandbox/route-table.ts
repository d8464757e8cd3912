import { chatRoute } from './chat.js';
import type { SandboxRoute } from './route.js';

/** Every upstream endpoint the sandbox imitates: a new protocol is one file and one line here. */
export const SANDBOX_ROUTES: readonly SandboxRoute[] = [chatRoute];
