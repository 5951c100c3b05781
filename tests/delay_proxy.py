"""A TCP proxy that delays every byte by a fixed time in each direction (or
only the broker's answers: to_client_only), preserving order: a path with a
known added latency, to check that the k6 extension measures it and that
the verdicts name it as the broker's."""

import asyncio
import threading
import time


class DelayProxy:
    def __init__(self, target_port, delay_s, listen_port=0, to_client_only=False):
        self.target_port, self.delay = target_port, delay_s
        self.to_client_only = to_client_only
        self.listen_port = listen_port
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _pipe(self, reader, writer, delay):
        queue = asyncio.Queue()

        async def delayed_writer():
            while True:
                due, chunk = await queue.get()
                if chunk is None:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()
            writer.close()

        task = asyncio.ensure_future(delayed_writer())
        try:
            while chunk := await reader.read(65536):
                queue.put_nowait((time.monotonic() + delay, chunk))
        except ConnectionError:
            pass
        queue.put_nowait((0, None))
        await task

    async def _handle(self, client_reader, client_writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(
            self._pipe(client_reader, up_writer, 0 if self.to_client_only else self.delay),
            self._pipe(up_reader, client_writer, self.delay),
            return_exceptions=True,
        )

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.listen_port))
        self.listen_port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self):
        self.thread.start()
        self.ready.wait(5)
        return self

    def __exit__(self, *exc):
        # Close the listener and the connections' tasks on the loop's own
        # thread, then stop it: nothing is left to run on a dead loop.
        async def shutdown():
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
