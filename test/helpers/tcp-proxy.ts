// A TCP proxy a test can freeze (bytes held both ways: a server that stops answering, sockets open)
// and thaw, so a shared server (Redis) can fail for one test without touching anyone else's.

import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let frozen = false;
  const held: { to: Socket; data: Buffer }[] = [];
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (data: Buffer) => {
      if (frozen) held.push({ to, data });
      else to.write(data);
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => void (frozen = true),
    thaw() {
      frozen = false;
      for (const { to, data } of held.splice(0)) if (!to.destroyed) to.write(data);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
