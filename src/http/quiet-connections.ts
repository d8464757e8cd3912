// A closing server's connections that carry no request, closed at once. Node's own
// closeIdleConnections() passes over a connection that has sent nothing yet (its request timeout
// runs from the moment it opened), so a client that opens a connection ahead of its next call, as
// undici does after a call it abandoned and a browser's preconnect does, would hold a closing
// gateway for the whole of its shutdown grace.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Node's http server keeps the response it is writing on a socket here, from its request's arrival until it finishes. */
const respondingOn = (socket: Socket) => (socket as Socket & { _httpMessage?: unknown })._httpMessage != null;

/** Watches `server`'s connections (one listener a connection, none a request); the closer ends those with no response under way. */
export function quietConnectionCloser(server: Server): () => void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  // (a kept-alive connection between two requests carries none either: no closeIdleConnections() beside it)
  return () => {
    for (const socket of open) if (!respondingOn(socket)) socket.destroy();
  };
}
