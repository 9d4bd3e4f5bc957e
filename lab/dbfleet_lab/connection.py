"""The lab's and the tests' PyMySQL connection: PyMySQL's own, with the TLS context of its default made once per
process.

Given no TLS option, PyMySQL tries TLS without verifying it ("preferred") and makes a new TLS context for every
connection it opens, loading the system's CA certificates each time: about 25 ms of CPU a login (2 ms with the context
kept), also for a login that fails, so a loop that waits for a server by logging in, or a test that watches the servers,
spends most of its CPU there. Connection keeps that one context (it verifies nothing, so it holds nothing of a
server); a connection given TLS options of its own gets its own context, as from pymysql.connect()."""
import pymysql


class Connection(pymysql.connections.Connection):
    """pymysql.connect(), the context of its preferred TLS made once per process."""

    _preferred_tls = None

    def _create_ssl_ctx(self, sslp):
        if sslp:
            return super()._create_ssl_ctx(sslp)
        if Connection._preferred_tls is None:
            Connection._preferred_tls = super()._create_ssl_ctx(sslp)
        return Connection._preferred_tls
