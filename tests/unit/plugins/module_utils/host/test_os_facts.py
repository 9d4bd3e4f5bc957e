# -*- coding: utf-8 -*-
"""host/os_facts.py: the per-OS facts in one table, the family read from /etc/os-release once."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\nVERSION_ID="13"\n'
UBUNTU = 'ID=ubuntu\nID_LIKE=debian\n'
ROCKY = 'ID="rocky"\nID_LIKE="rhel centos fedora"\n'
ALMA = 'ID="almalinux"\nID_LIKE="rhel centos fedora"\n'


@pytest.mark.parametrize('text, family', [(DEBIAN, 'debian'), (UBUNTU, 'debian'), (ROCKY, 'redhat'), (ALMA, 'redhat'),
                                          ('ID=fedora\n', 'redhat'), ('ID=alpine\n', None), ('', None), (None, None)])
def test_family_from_os_release(text, family):
    assert os_facts.family(text) == family


def test_the_host_file_is_read_once(tmp_path):
    release = tmp_path / 'os-release'
    release.write_text(ROCKY)
    assert os_facts.host_family(str(release)) == 'redhat'
    release.write_text(DEBIAN)
    assert os_facts.host_family(str(release)) == 'redhat'          # the first reading stands for the process
    assert os_facts.host_family(str(tmp_path / 'absent')) is None


def test_every_family_states_every_fact():
    for family, facts in os_facts.FAMILIES.items():
        assert sorted(facts) == ['datadirs', 'dropin_dir', 'name', 'services', 'sockets'], family
        assert all(d.startswith('/') for d in facts['datadirs'])
        assert facts['dropin_dir'].startswith('/etc/') and all(s.startswith('/') for s in facts['sockets'])
        # the services are keyed by versions/flavors.py's names; Aurora is not restarted through a service
        assert set(facts['services']) == set(flavors.FLAVORS) - {flavors.AURORA}, family
    assert set(os_facts.RELEASE_WORDS.values()) == set(os_facts.FAMILIES)


def test_facts_of_an_unknown_family():
    assert os_facts.fact(None, 'dropin_dir') is None and os_facts.fact('alpine', 'sockets', ()) == ()
    assert os_facts.display_name('redhat') == 'RedHat' and os_facts.display_name('alpine') == 'alpine'


def test_no_login_pulls_in_the_topology_code():
    """login/connection.py (every module's login) reaches os_facts, not topology / clusters, for the OS family."""
    import ast
    import os
    here = os.path.join(os.path.dirname(os.path.abspath(os_facts.__file__)), '..')
    prefix = 'ansible_collections.dbfleet.innodb.plugins.module_utils'
    seen, todo = set(), ['login.connection']
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        with open(os.path.join(here, *name.split('.')) + '.py') as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or '').startswith(prefix):
                rest = node.module[len(prefix):].lstrip('.')
                for a in node.names:
                    full = rest + '.' + a.name if rest else a.name
                    todo.append(full if os.path.exists(os.path.join(here, *full.split('.')) + '.py') else rest)
    assert 'host.os_facts' in seen
    assert not seen & {'replication.topology', 'replication.clusters', 'versions.flavors'}, sorted(seen)
