# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as a user installs it, run against the lab.

tests/install-test.sh builds the tarball, installs it with `ansible-galaxy collection install` into an empty
collections path and a new virtualenv holding only what README.md tells a user to install (the newest ansible-core
and PyMySQL, requirements/install-test.txt, on Python >= 3.12), and renders every plugin and role with that
ansible-doc. Then, from a directory outside the repository, with a configuration and inventory of its own (the
lab's hosts and group_vars, as a user would write them; the modules run by that virtualenv's Python), the test runs
`ansible-playbook dbfleet.innodb.site` on one MySQL and one MariaDB host whose roles' drop-ins and runtime values
it took away, a second time (nothing changes), and `dbfleet.innodb.verify` (no drift). The hosts' drop-ins and
values are put back afterwards.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
import yaml

from dbfleet_testing.servers import INVENTORY, ROLE_DROPINS, ROOT, global_value, host_vars, role_state_kept, sql

HOSTS = ('mysql80', 'mariadb1011')
# What site.yml changes on a host whose role drop-ins are gone and whose values are off (flush_neighbors 1,
# AHI OFF; the lab's group_vars want 0 and ON): each role's drop-in (template) and runtime value (global_variables).
CHANGED_FIRST_RUN = 4


def user_env(work):
    """The environment of a user's shell: the install's virtualenv first, no variable of the checkout's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(('ANSIBLE_', 'VIRTUAL_ENV', 'PYTHON'))}
    env.update(PATH='%s/venv/bin:/usr/local/bin:/usr/bin:/bin' % work, ANSIBLE_CONFIG=os.path.join(work, 'ansible.cfg'),
               ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0')
    return env


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """The install (tests/install-test.sh DIR): DIR holds venv/, collections/ and ansible.cfg."""
    work = str(tmp_path_factory.mktemp('install'))
    assert not work.startswith(ROOT + os.sep)
    proc = subprocess.run([os.path.join(ROOT, 'tests', 'install-test.sh'), work], capture_output=True, text=True,
                          env=user_env(work), timeout=900, check=False, cwd=work)
    assert proc.returncode == 0 and 'install test: ok' in proc.stdout, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert 'ansible [core 2.21.' in proc.stdout, proc.stdout
    return work


@pytest.fixture(scope='module')
def user_dir(installed, tmp_path_factory):
    """A user's directory outside the repository: an inventory of the lab's hosts in HOSTS, its group_vars."""
    user = tmp_path_factory.mktemp('user')
    hosts = {}
    for host in HOSTS:
        hv = dict(host_vars(host))
        hv.update(ansible_connection='local', ansible_python_interpreter=os.path.join(installed, 'venv', 'bin', 'python'))
        hosts[host] = hv
    with open(os.path.join(ROOT, 'inventories', 'lab', 'group_vars', 'all.yml'), encoding='utf-8') as handle:
        group_vars = yaml.safe_load(handle)
    (user / 'inventory.yml').write_text(yaml.safe_dump({'all': {'vars': group_vars, 'hosts': hosts}}))
    return user


def playbook(installed, user, name, extra=None):
    """ansible-playbook dbfleet.innodb.<name> from the user's directory; returns (proc, {host: recap counts})."""
    argv = [os.path.join(installed, 'venv', 'bin', 'ansible-playbook'), '-i', 'inventory.yml', 'dbfleet.innodb.' + name]
    if extra:
        argv += ['-e', json.dumps(extra)]
    # As from a shell in the user's directory (verify.yml's reports go to $PWD/reports by default).
    env = dict(user_env(installed), PWD=str(user))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False, cwd=str(user))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    recap = {}
    for match in re.finditer(r'^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$', proc.stdout, re.M):
        recap[match.group(1)] = dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', match.group(2)))
    return proc, recap


def test_site_and_verify_from_the_installed_tarball(installed, user_dir):
    inventory_hosts = yaml.safe_load(open(INVENTORY, encoding='utf-8'))
    assert inventory_hosts, 'the lab is not up: start it with `make lab-up`'
    collection = os.path.join(installed, 'collections', 'ansible_collections', 'dbfleet', 'innodb')
    assert os.path.isfile(os.path.join(collection, 'MANIFEST.json')) and not os.path.islink(collection)
    with role_state_kept(list(HOSTS)):
        for host in HOSTS:
            for name in ROLE_DROPINS:
                path = os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], name)
                if os.path.exists(path):
                    os.unlink(path)
            sql(host, 'SET GLOBAL innodb_flush_neighbors = 1')
            sql(host, 'SET GLOBAL innodb_adaptive_hash_index = OFF')

        proc, recap = playbook(installed, user_dir, 'site', {'site_hosts': list(HOSTS)})
        # Every module ran from the install: the playbook's roles and plugins are the tarball's, not the checkout's.
        assert ROOT not in proc.stdout, [line for line in proc.stdout.splitlines() if ROOT in line][:5]
        for host in HOSTS:
            assert recap[host]['failed'] == 0 and recap[host]['unreachable'] == 0, recap
            assert recap[host]['changed'] == CHANGED_FIRST_RUN, (host, recap[host], proc.stdout[-6000:])
            for name in ROLE_DROPINS:
                assert os.path.exists(os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], name)), (host, name)
            assert global_value(host, 'innodb_flush_neighbors') == '0'
            assert global_value(host, 'innodb_adaptive_hash_index') == 'ON'

        _proc, again = playbook(installed, user_dir, 'site', {'site_hosts': list(HOSTS)})
        for host in HOSTS:
            assert again[host]['changed'] == 0 and again[host]['failed'] == 0, (host, again)
            # The same tasks, those with nothing to do skipped (a drop-in that says it already, a value set already).
            assert (again[host]['ok'] + again[host]['skipped'] == recap[host]['ok'] + recap[host]['skipped']
                    and again[host]['ok'] < recap[host]['ok']), (host, again[host], recap[host])

        reports = user_dir / 'reports'
        _proc, audit = playbook(installed, user_dir, 'verify', {'verify_hosts': list(HOSTS),
                                                                'verify_fail_on_drift': True})
        report = json.loads((reports / 'verify.json').read_text())
        assert sorted(report['hosts']) == sorted(HOSTS), sorted(report['hosts'])
        for host in HOSTS:
            assert audit[host]['failed'] == 0 and audit[host]['changed'] == 0, (host, audit)
            entry = report['hosts'][host]
            assert entry['status'] == 'ok', (host, entry['status'], entry.get('variables'))
            variables = entry['variables']
            assert variables['innodb_flush_neighbors']['desired'] == 0, variables['innodb_flush_neighbors']
            assert variables['innodb_flush_neighbors']['status'] == 'ok', variables['innodb_flush_neighbors']
            assert variables['innodb_adaptive_hash_index']['desired'] is True, variables['innodb_adaptive_hash_index']
            assert variables['innodb_adaptive_hash_index']['status'] == 'ok', variables['innodb_adaptive_hash_index']
        assert (reports / 'verify.html').exists() and (reports / 'verify-junit.xml').exists()
