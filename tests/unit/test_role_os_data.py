"""Per-OS data of the roles: the drop-in directory of each OS family is written down once
(os_facts.FAMILIES, used by dbfleet.innodb.desired_settings for every role); no role, task,
template or playbook writes a drop-in directory down itself, and no role keeps per-OS data of its own."""
import os
import sys

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))
from dbfleet_lab import machines  # noqa: E402  pylint: disable=wrong-import-position

ROLES = sorted(os.listdir(os.path.join(ROOT, 'roles')))
# The drop-in directory of each family, from the one table.
DROPIN_DIRS = dict((os_facts.display_name(f), facts['dropin_dir']) for f, facts in os_facts.FAMILIES.items())


def test_the_debian_drop_in_directory_is_one_the_packages_option_files_include():
    """Another source than the table: the option layout of Oracle's Debian package as the lab's booted host pkg5
    lays it out (lab/dbfleet_lab/machines.py; the fleet test test_vendor_unit.py runs a server on it)."""
    includes = [line.split()[1].rstrip('/') for text in machines.VENDOR_OPTION_FILES.values()
                for line in text.splitlines() if line.startswith('!includedir')]
    assert DROPIN_DIRS['Debian'] in includes, (DROPIN_DIRS['Debian'], includes)


@pytest.mark.parametrize('role', ROLES)
def test_no_role_keeps_per_os_data_or_a_platform_task_file(role):
    for family in DROPIN_DIRS:
        assert not os.path.exists(os.path.join(ROOT, 'roles', role, 'vars', family + '.yml'))
    assert not os.path.exists(os.path.join(ROOT, 'roles', role, 'tasks', 'platform.yml'))


def _files(*parts):
    top = os.path.join(ROOT, *parts)
    for base, _dirs, names in os.walk(top):
        for name in names:
            if name.endswith(('.yml', '.j2', '.py')):
                yield os.path.join(base, name)


@pytest.mark.parametrize('path', sorted(p for role in ROLES for p in _files('roles', role))
                         + sorted(_files('playbooks'))
                         + sorted(p for p in _files('plugins') if not p.endswith('module_utils/host/os_facts.py')
                                  and '/modules/' not in p and '/doc_fragments/' not in p))
def test_no_os_path_is_hard_coded(path):
    with open(path) as handle:
        text = handle.read()
    for directory in DROPIN_DIRS.values():
        assert directory not in text, path
