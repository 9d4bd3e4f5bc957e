"""Fixtures of the playbook tests: ``browser``, headless Chromium through chromedriver (dbfleet_testing.browser)."""
import pytest

from dbfleet_testing.browser import headless_chromium


@pytest.fixture
def browser(tmp_path):
    yield from headless_chromium(tmp_path)
