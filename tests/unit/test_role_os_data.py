"""Per-OS data of the roles (vars/Debian.yml, vars/RedHat.yml): present, alike, and the only place
where a drop-in directory is written down."""
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = ('adaptive_hash', 'flush_neighbors', 'memcached')
EXPECTED = {
    'Debian': dict(option_dropin_dir='/etc/mysql/conf.d'),
    'RedHat': dict(option_dropin_dir='/etc/my.cnf.d'),
}


@pytest.mark.parametrize('role', ROLES)
@pytest.mark.parametrize('family', sorted(EXPECTED))
def test_each_role_has_the_data_of_each_os_family(role, family):
    with open(os.path.join(ROOT, 'roles', role, 'vars', family + '.yml')) as handle:
        data = yaml.safe_load(handle)
    assert data == {'__%s_os' % role: EXPECTED[family]}


def _files(*parts):
    top = os.path.join(ROOT, *parts)
    for base, _dirs, names in os.walk(top):
        for name in names:
            if name.endswith(('.yml', '.j2')):
                yield os.path.join(base, name)


@pytest.mark.parametrize('path', sorted(p for role in ROLES for p in _files('roles', role) if '/vars/' not in p)
                         + sorted(_files('playbooks')))
def test_no_os_path_or_service_is_hard_coded(path):
    with open(path) as handle:
        text = handle.read()
    assert '/etc/mysql/conf.d' not in text and '/etc/my.cnf.d' not in text, path
