"""Fixtures of the booted hosts' tests: site.yml's runs over all of them, shared (dbfleet_testing.booted_site)."""
from dbfleet_testing.booted_site import site_runs  # noqa: F401  pylint: disable=unused-import
