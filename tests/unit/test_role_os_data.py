"""Per-OS data of the roles: the drop-in directory of each OS family is written down once
(os_facts.FAMILIES, used by dbfleet.innodb.desired_settings for every role); no role, task,
template or playbook writes a drop-in directory down itself, and no role keeps per-OS data of its own."""
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = sorted(os.listdir(os.path.join(ROOT, 'roles')))
EXPECTED = {'Debian': '/etc/mysql/conf.d', 'RedHat': '/etc/my.cnf.d'}


def test_the_drop_in_directory_of_each_os_family_is_written_down_once():
    assert dict((os_facts.display_name(f), facts['dropin_dir']) for f, facts in os_facts.FAMILIES.items()) == EXPECTED


@pytest.mark.parametrize('role', ROLES)
def test_no_role_keeps_per_os_data_or_a_platform_task_file(role):
    for family in EXPECTED:
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
    for directory in EXPECTED.values():
        assert directory not in text, path
