// An upstream of a test's own, on a free port: the test writes each answer from the request's JSON body.
import { createServer, type ServerResponse } from 'node:http';

export interface ScriptedUpstream {
  url: string;
  close(): void;
}

export async function startScriptedUpstream(answer: (body: any, res: ServerResponse) => void): Promise<ScriptedUpstream> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => answer(JSON.parse(raw), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
