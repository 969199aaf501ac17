// A client of the npm package ws against an echo server (TestNodeClient):
// for each URL given, text and binary messages (a large one among them), a
// ping whose pong must carry its payload, and a close with 4000; a URL with
// "deflate" in it offers permessage-deflate. Prints "ok" and exits 0, or
// prints what went wrong and exits 1.
'use strict';
const WebSocket = require('ws');

function fail(msg) {
  console.error(msg);
  process.exit(1);
}
setTimeout(() => fail('timed out'), 60000).unref();

function pattern(n, seed) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed) % 251;
  return b;
}

async function run(url) {
  const deflate = url.includes('deflate');
  const ws = new WebSocket(url, { perMessageDeflate: deflate, maxPayload: 16 << 20 });
  const events = [];
  let waiter = null;
  const push = (e) => { events.push(e); if (waiter) { const w = waiter; waiter = null; w(); } };
  ws.on('message', (data, isBinary) => push({ kind: 'message', data, isBinary }));
  ws.on('pong', (data) => push({ kind: 'pong', data }));
  ws.on('close', (code, reason) => push({ kind: 'close', code, reason: reason.toString() }));
  ws.on('error', (err) => fail(`${url}: ${err.message}`));
  const next = async () => {
    while (events.length === 0) await new Promise((r) => { waiter = r; });
    return events.shift();
  };
  await new Promise((r) => ws.once('open', r));
  const ext = ws.extensions;
  if (deflate !== ext.includes('permessage-deflate')) fail(`${url}: extensions "${ext}"`);

  const messages = [
    ['hello, loop', false],
    ['', false],
    [pattern(256, 1), true],
    ['x'.repeat(100000), false],
    [pattern(1 << 20, 2), true],
  ];
  for (const [msg, isBinary] of messages) {
    ws.send(msg, { binary: isBinary });
    const e = await next();
    const want = Buffer.from(msg);
    if (e.kind !== 'message' || e.isBinary !== isBinary || !want.equals(e.data)) {
      fail(`${url}: sent ${want.length} bytes (binary ${isBinary}), got ${e.kind} ${e.data && e.data.length} bytes (binary ${e.isBinary})`);
    }
  }
  ws.ping('node ping');
  let e = await next();
  if (e.kind !== 'pong' || e.data.toString() !== 'node ping') fail(`${url}: pong ${JSON.stringify(e)}`);
  ws.close(4000, 'node bye');
  e = await next();
  if (e.kind !== 'close' || e.code !== 4000) fail(`${url}: close ${JSON.stringify(e)}`);
}

(async () => {
  for (const url of process.argv.slice(2)) await run(url);
  console.log('ok');
})().catch((err) => fail(err.stack));
