"""Shared fixtures and rules for the testinfra checks of the Molecule scenarios.

Each scenario's verifier (molecule/<scenario>/molecule.yml, `additional_files_or_dirs`) names the check files that
apply to it, one per subject. Each check runs on the hosts it applies to: a check marked
`@pytest.mark.hosts(applies=...)` (or in a module with `pytestmark = pytest.mark.hosts(applies=...)`) is collected
only for the hosts whose inventory variables satisfy `applies(hostvars)`, decided here at collection time from the
scenario's inventory; a check that applies to no host of the scenario is not collected there. A check file that
applies to no host at all stops the run (the scenario names a check it cannot run), and a check that skips fails it:
no Molecule check skips itself, so that "N passed" counts what was checked, on every host it applies to.
"""

import pytest

from dbhelpers import connect, login_of

SKIPS = pytest.StashKey[list]()
FILES = pytest.StashKey[set]()


def pytest_configure(config):
    config.addinivalue_line('markers', 'hosts(applies=predicate): the check runs on the scenario hosts whose inventory '
                                       'variables satisfy applies(hostvars); the other hosts get no test')
    config.stash[SKIPS] = []
    config.stash[FILES] = set()


def _applies(item):
    predicates = [marker.kwargs.get('applies') for marker in item.iter_markers('hosts')]
    if not all(callable(applies) for applies in predicates):
        raise pytest.UsageError('%s: mark it hosts(applies=<function of the hostvars>)' % item.nodeid)
    if not predicates:
        return True
    hostvars = item.callspec.params['_testinfra_host'].backend.get_variables()
    return all(applies(hostvars) for applies in predicates)


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem():
    """A check's tests, one per scenario host its `hosts` markers let in: the others are never made."""
    made = yield
    if isinstance(made, list):
        return [item for item in made if not isinstance(item, pytest.Function) or _applies(item)]
    return made


def pytest_collection_modifyitems(session, items):
    """A check file that applies to no host of the scenario stops the run: the scenario names a check it cannot run."""
    idle = sorted(str(path) for path in session.config.stash[FILES] - {item.path for item in items})
    if idle:
        raise pytest.UsageError('%s: none of its checks applies to a host of this scenario (their `hosts` markers); '
                                "take the file out of the scenario's verifier, or give the scenario such a host"
                                % ', '.join(idle))


def _note_skip(config, report):
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        config.stash[SKIPS].append('%s: %s' % (report.nodeid, reason))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item):
    report = yield
    _note_skip(item.config, report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    report = yield
    _note_skip(collector.config, report)
    if isinstance(collector, pytest.Module):
        collector.config.stash[FILES].add(collector.path)
    return report


def pytest_sessionfinish(session):
    """A skipped check fails the scenario: it was collected for a host it applies to, and checked nothing there."""
    if session.config.stash[SKIPS] and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    if config.stash[SKIPS]:
        terminalreporter.section('skipped checks fail the scenario (tests/molecule/conftest.py)', red=True)
        for line in config.stash[SKIPS]:
            terminalreporter.line(line, red=True)


@pytest.fixture(scope='module')
def hostvars(host):
    return host.ansible.get_variables()


@pytest.fixture(scope='module')
def login(hostvars):
    """(user, password) for the checks' own connections (dbhelpers.login_of)."""
    return login_of(hostvars)


@pytest.fixture
def dropin_dir(host, hostvars):
    """The drop-in directory the roles write to: the inventory's, else (a booted host) the last directory the
    package's /etc/mysql/my.cnf includes, as the collection finds it (docs/hosts.md)."""
    if hostvars.get('dbfleet_option_dropin_dir'):
        return hostvars['dbfleet_option_dropin_dir']
    if hostvars.get('ansible_become'):
        text = host.file('/etc/mysql/my.cnf').content_string
        included = [line.split(None, 1)[1].strip().rstrip('/') for line in text.splitlines() if line.startswith('!includedir')]
        assert included, text
        return included[-1]
    return '/etc/mysql/conf.d'


@pytest.fixture
def db(hostvars, login):
    """A connection to the host's server with the inventory's login (socket first)."""
    conn = connect(hostvars, login)
    yield conn
    conn.close()
