"""dbfleet_lab.connection: the TLS context of PyMySQL's preferred TLS made once per process, a connection's own TLS
options still its own."""
import os
import ssl
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab.connection import Connection  # noqa: E402  pylint: disable=wrong-import-position


def unconnected(**kwargs):
    """A Connection as built before its login (defer_connect: no server needed)."""
    return Connection(host="127.0.0.1", port=1, user="nobody", password="", defer_connect=True, **kwargs)


def test_preferred_tls_shares_one_context():
    first, second = unconnected(), unconnected()
    assert first.ssl and not first._ssl_required        # pylint: disable=protected-access
    assert first.ctx is second.ctx
    assert first.ctx.verify_mode == ssl.CERT_NONE and not first.ctx.check_hostname


def test_own_tls_options_get_their_own_context():
    own = ssl.create_default_context()
    conn = unconnected(ssl=own)
    assert conn.ctx is own and conn._ssl_required       # pylint: disable=protected-access
    assert conn.ctx is not unconnected().ctx
    assert not unconnected(ssl_disabled=True).ssl
