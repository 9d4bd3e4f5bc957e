# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Signals turned into an exception, so that a module's finally blocks put back what it changed.

Python's default for SIGTERM and SIGHUP ends the process at once, without running any finally block: a
module that turned something on for a while (ahi_advisor's InnoDB monitors) would leave it on when the
controller is stopped. Inside `with Interruptible():` SIGTERM, SIGHUP and SIGINT raise Interrupted
instead; hold() ignores them while the module restores (a second signal must not abort the restore);
leaving the block puts the previous handlers back.
"""

from __future__ import annotations

import signal

SIGNALS = ('SIGTERM', 'SIGHUP', 'SIGINT')


class Interrupted(BaseException):
    """The module process got a signal (a BaseException, so `except Exception` does not swallow it)."""

    def __init__(self, signum):
        BaseException.__init__(self, signum)
        self.signum = signum

    def __str__(self):
        try:
            return 'interrupted by %s' % signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover
            return 'interrupted by signal %s' % self.signum


class Interruptible(object):
    """Context manager: SIGTERM/SIGHUP/SIGINT raise Interrupted inside the block."""

    def __init__(self, names=SIGNALS):
        self.names = names
        self._old = {}

    def _raise(self, signum, frame):
        raise Interrupted(signum)

    def __enter__(self):
        return self.install()

    def install(self):
        """What entering the block does, for a user that cannot hold a with block open: returns self."""
        for name in self.names:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                self._old[sig] = signal.signal(sig, self._raise)
            except (ValueError, OSError):  # pragma: no cover - not the main thread
                pass
        return self

    def hold(self):
        """Ignore the signals from now on (while restoring); __exit__ puts the old handlers back."""
        for sig in self._old:
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (ValueError, OSError):  # pragma: no cover
                pass

    def __exit__(self, *exc):
        self.restore()
        return False

    def restore(self):
        """What leaving the block does: the previous handlers back."""
        for sig, old in self._old.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):  # pragma: no cover
                pass
        self._old = {}
