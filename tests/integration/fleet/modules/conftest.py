"""Fixtures of the TLS and password tests: fake servers and their certificates (dbfleet_testing.tls)."""
from dbfleet_testing.tls import auth_servers, fake_server, lab_network, tls_files  # noqa: F401  pylint: disable=unused-import
