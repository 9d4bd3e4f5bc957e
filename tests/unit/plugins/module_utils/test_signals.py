"""signals.Interruptible: SIGTERM / SIGHUP / SIGINT raise Interrupted inside the block, hold() ignores them
while restoring, and the previous handlers come back afterwards."""
import os
import signal

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import signals


@pytest.mark.parametrize('name', ['SIGTERM', 'SIGHUP', 'SIGINT'])
def test_signal_raises_interrupted_and_handlers_come_back(name):
    sig = getattr(signal, name)
    before = signal.getsignal(sig)
    with pytest.raises(signals.Interrupted) as caught:
        with signals.Interruptible():
            os.kill(os.getpid(), sig)
    assert caught.value.signum == sig
    assert str(caught.value) == 'interrupted by %s' % name
    assert signal.getsignal(sig) == before


def test_hold_ignores_a_second_signal_while_restoring():
    restored = []
    with pytest.raises(signals.Interrupted):
        with signals.Interruptible() as guard:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            finally:
                guard.hold()
                os.kill(os.getpid(), signal.SIGTERM)  # ignored: the restore goes on
                restored.append(True)
    assert restored == [True]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
