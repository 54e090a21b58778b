// The least an HTTP hop through Node can cost: a proxy with no routing, no checks and no logging,
// on a keep-alive pool to its target (scripts/bench-hop-floor.ts). Arguments: port, target port.
import { Agent, createServer, request } from 'node:http';

const [port, target] = [Number(process.argv[2]), Number(process.argv[3])];
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
createServer((req, res) => {
  const up = request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
