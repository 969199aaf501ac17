// A server of the npm package ws for Dial (TestNodeServer): it prints
// "listening on ADDR", echoes every message with its kind, answers
// "close-me" with a close (4001 "node bye") and "ping-me" with a ping whose
// pong payload it sends back as "pong:PAYLOAD". It offers permessage-deflate
// to clients that ask. It exits when its stdin closes.
'use strict';
const WebSocket = require('ws');

const wss = new WebSocket.Server({ host: '127.0.0.1', port: 0, perMessageDeflate: true, maxPayload: 16 << 20 });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    const s = isBinary ? '' : data.toString();
    if (s === 'close-me') {
      ws.close(4001, 'node bye');
    } else if (s === 'ping-me') {
      ws.ping('node ping');
    } else {
      ws.send(data, { binary: isBinary });
    }
  });
  ws.on('pong', (data) => ws.send('pong:' + data.toString()));
});
wss.on('listening', () => console.log(`listening on 127.0.0.1:${wss.address().port}`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
