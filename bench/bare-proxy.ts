// The floor: the least a Node.js process in the middle can cost. It forwards method, path and
// headers, pipes the body in and the answer out, and parses nothing; whatever the gateway costs
// beyond this is the gateway's own work.
//
//   node --import tsx bench/bare-proxy.ts <listen port> <upstream port>
// (the bench runs it transpiled to plain JavaScript, by plain node)
import http from 'node:http';

const [listenPort, upstreamPort] = process.argv.slice(2).map(Number);
if (!listenPort || !upstreamPort) {
  process.stderr.write('usage: bare-proxy.ts <listen port> <upstream port>\n');
  process.exit(2);
}

// As many upstream connections as the clients open, reused: the gateway's own pool does the same.
const agent = new http.Agent({ keepAlive: true, maxSockets: 65_536, maxFreeSockets: 65_536 });

const server = http.createServer((req, res) => {
  const upstream = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  });
  // A client that leaves stops the upstream call, as it would through any proxy.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});

server.listen(listenPort, '127.0.0.1', () => process.stderr.write(`bare proxy listening on http://127.0.0.1:${listenPort}\n`));
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
