"""Fixtures of the booted hosts' tests: site.yml's runs and server_facts over all of them, shared
(dbfleet_testing.booted_site)."""
from dbfleet_testing.booted_site import booted_facts, site_runs  # noqa: F401  pylint: disable=unused-import
