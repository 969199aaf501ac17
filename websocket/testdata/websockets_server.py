"""A server of Python's websockets for Dial (TestPythonServer): it prints
"listening on ADDR", echoes every message with its kind, answers "close-me"
with a close (4001 "py bye") and "ping-me" with a ping, then "pong:py ping"
once the pong came. It accepts permessage-deflate. It exits when its stdin
closes."""

import asyncio
import sys

import websockets


async def handler(ws, path=None):
    async for msg in ws:
        if msg == "close-me":
            await ws.close(code=4001, reason="py bye")
        elif msg == "ping-me":
            pong = await ws.ping(b"py ping")
            await pong
            await ws.send("pong:py ping")
        else:
            await ws.send(msg)


async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, compression="deflate", max_size=16 << 20) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening on 127.0.0.1:{port}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


asyncio.run(main())
