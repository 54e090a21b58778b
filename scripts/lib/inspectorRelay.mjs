// Relays Chrome DevTools Protocol messages between its parent (IPC) and an inspector's WebSocket
// (argv[2]). Node 20 has a WebSocket client only behind --experimental-websocket, hence a process of its own.
const ws = new WebSocket(process.argv[2]);
ws.onopen = () => process.send({ ready: true });
ws.onerror = (e) => process.send({ failed: String(e.message ?? e) });
ws.onmessage = (e) => process.send(JSON.parse(e.data));
process.on('message', (m) => ws.send(JSON.stringify(m)));
process.on('disconnect', () => ws.close());
