"""Work a test keeps going in the background while it runs something else (a load, a watch of the servers)."""
import threading


class Background:
    """A daemon thread running loop() while inside `with`: on leaving, stop is set and the thread joined (30 s at most).
    loop() runs until stop is set."""

    def __init__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)
