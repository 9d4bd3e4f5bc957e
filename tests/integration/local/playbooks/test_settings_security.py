# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/settings.yml with a map that turns security off, on mysql80 and mariadb1011 (issue 43).

skip_grant_tables, init_file, plugin_dir and secure_file_priv - a server without authentication, or SQL and shared
objects from /tmp run as mysqld - with wsrep_sst_auth (a secret; MariaDB has the variable without a cluster) and one
harmless setting beside them. Two runs, as a DBA would: the dry run (--check --diff) and the real one, both at -vvv
with --diff; every assertion reads those two runs. Refused before any change: no drop-in, the harmless setting not set
at runtime, the same message in check mode; the secret's value in no output and in no file of the servers'
option-file directories."""

from __future__ import annotations

import os

import pytest

from dbfleet_testing.runs import YAML_RESULTS, flat, playbook_proc
from dbfleet_testing.servers import global_value, host_vars

HOSTS = ('mysql80', 'mariadb1011')
SECRET = 'sst:Guardrail-Not-Shown-4711'
TEXT = ("skip_grant_tables: 'ON'\ninit_file: /tmp/dbfleet-guardrail.sql\nplugin_dir: /tmp\nsecure_file_priv: ''\n"
        "wsrep_sst_auth: '%s'\ninnodb_lock_wait_timeout: 61\n" % SECRET)
DROPIN = '60-dbfleet-settings.cnf'


def _files(host):
    """{path: (mode, text)} of the files of the host's option-file directories (its my.cnf's and the drop-ins')."""
    found = {}
    hv = host_vars(host)
    for directory in sorted({os.path.dirname(hv['dbfleet_option_file']), hv['dbfleet_option_dropin_dir']}):
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                with open(path, encoding='utf-8', errors='replace') as handle:
                    found[path] = (os.stat(path).st_mode & 0o777, handle.read())
    return found


@pytest.fixture(scope='module')
def runs(lab):
    """(state before, {mode: CompletedProcess}, state after): the dry run and the real run of the refused map."""
    def state():
        return dict((h, dict(timeout=global_value(h, 'innodb_lock_wait_timeout'), files=_files(h))) for h in HOSTS)
    before = state()
    assert all(before[h]['timeout'] != '61' for h in HOSTS), before
    out = {}
    for mode, check in (('check', True), ('run', False)):
        out[mode] = playbook_proc('inventories/lab', 'settings.yml', check=check, diff=True, args=('-vvv',),
                                  extra=dict(dbfleet_settings_text=TEXT, dbfleet_settings_hosts=list(HOSTS)),
                                  env_extra=YAML_RESULTS)
    after = state()
    yield before, out, after
    # A collection that took the map (today's main did) left a drop-in and a runtime value: the servers as found.
    for host in HOSTS:
        path = os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], DROPIN)
        if os.path.exists(path) or after[host]['timeout'] != before[host]['timeout']:
            if os.path.exists(path):
                os.remove(path)
            lab.run('restart', host)


@pytest.mark.parametrize('mode', ['check', 'run'])
def test_a_map_that_turns_security_off_is_refused_before_any_change(runs, mode):
    before, out, after = runs
    proc = out[mode]
    text = flat(proc.stdout + proc.stderr)
    assert proc.returncode != 0, text[-3000:]
    for host in HOSTS:
        assert after[host] == before[host], host          # nothing set at runtime, no file written or changed
        assert not os.path.exists(os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], DROPIN)), host
        assert 'fatal: [%s]' % host in text, host
    assert text.count('settings_values turns security off, refused before anything changed') >= len(HOSTS)
    for name, why in (('skip_grant_tables', 'starts the server without its privilege tables'),
                      ('init_file', 'SQL the server runs at start'),
                      ('plugin_dir', 'shared objects (plugins, UDFs) are loaded from'),
                      ('secure_file_priv', 'LOAD_FILE() may use')):
        assert '%s (' % name in text and why in text, name
    assert 'settings_allow_security_settings' in text
    assert 'settings_values holds a secret (wsrep_sst_auth)' in text


def test_the_secret_is_in_no_output_and_no_file(runs):
    before, out, after = runs
    for mode, proc in out.items():
        assert SECRET not in proc.stdout + proc.stderr, mode
        assert 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER' in proc.stdout, mode     # -vvv shows the invocation, masked
    for host in HOSTS:
        assert not [path for path, (_mode, text) in after[host]['files'].items() if SECRET in text], host
