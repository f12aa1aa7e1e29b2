"""Clients asking one path of a server in a loop, in a process of their own (so that
their work does not slow the test's own requests): `python -m tests.foundation.http_flood
PORT PATH CLIENTS EACH` prints the statuses it got, as JSON {status: count}."""

import asyncio
import json
import sys
from collections import Counter


async def status_of(port: int, path: str, cookie: str = "") -> int:
    """One GET on a connection of its own: the answer's status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        headers = f"Cookie: {cookie}\r\n" if cookie else ""
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        status_line = await reader.readline()
        await reader.read()  # the rest of the answer
        return int(status_line.split()[1])
    finally:
        writer.close()


async def flood(port: int, path: str, clients: int, each: int) -> Counter[int]:
    async def looping() -> list[int]:
        return [await status_of(port, path) for _ in range(each)]

    answers = await asyncio.gather(*(looping() for _ in range(clients)))
    return Counter(status for client in answers for status in client)


if __name__ == "__main__":
    port, path, clients, each = sys.argv[1:5]
    print(json.dumps(asyncio.run(flood(int(port), path, int(clients), int(each)))))
