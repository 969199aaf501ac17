"""A client of Python's websockets against an echo server (TestPythonClient):
for each URL given, text and binary messages (a large one among them), a
ping whose pong must arrive, and a close with 4000; a URL with "deflate" in
it offers permessage-deflate. Prints "ok" and exits 0, or exits 1 saying
what went wrong."""

import asyncio
import sys

import websockets


def pattern(n, seed):
    return bytes((i * 7 + seed) % 251 for i in range(n))


async def run(url):
    deflate = "deflate" in url
    async with websockets.connect(url, compression="deflate" if deflate else None, max_size=16 << 20) as ws:
        exts = ws.response_headers.get("Sec-WebSocket-Extensions", "")
        if deflate != ("permessage-deflate" in exts):
            raise AssertionError(f"{url}: extensions {exts!r}")
        for msg in ["hello, loop", "", pattern(256, 1), "x" * 100000, pattern(1 << 20, 2)]:
            await ws.send(msg)
            got = await ws.recv()
            if type(got) is not type(msg) or got != msg:
                raise AssertionError(f"{url}: sent {len(msg)} ({type(msg).__name__}), got {len(got)} ({type(got).__name__})")
        pong = await ws.ping(b"py ping")
        await asyncio.wait_for(pong, 30)
        await ws.close(code=4000, reason="py bye")
        if ws.close_code != 4000:
            raise AssertionError(f"{url}: close code {ws.close_code}")


async def main():
    for url in sys.argv[1:]:
        await run(url)
    print("ok")


try:
    asyncio.run(asyncio.wait_for(main(), 60))
except Exception as e:  # noqa: BLE001 - the test prints whatever failed
    print(f"{type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)
