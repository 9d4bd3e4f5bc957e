"""topology_facts on the lab's servers: the service a restart would use, read on the host."""
import os

import pytest

from dbfleet_testing.lab import REPO, require_lab_hosts
from dbfleet_testing.runs import adhoc_result, ansible

INVENTORY = os.path.join(REPO, 'inventories', 'lab', 'hosts.yml')
WANTED = {'mysql80': 'mysql', 'mysql97': 'mysql', 'mariadb1011': 'mariadb', 'mariadb118': 'mariadb'}


def os_release_id():
    with open('/etc/os-release', encoding='utf-8') as handle:
        fields = dict(line.strip().split('=', 1) for line in handle if '=' in line)
    return ' '.join([fields.get('ID', ''), fields.get('ID_LIKE', '')]).replace('"', '')


@pytest.fixture(scope='module')
def topology(lab):
    """One ad-hoc run of the module on every server of WANTED: (rc, output)."""
    del lab
    require_lab_hosts(INVENTORY, sorted(WANTED))
    return ansible('ansible', ':'.join(sorted(WANTED)), '-i', INVENTORY, '-m', 'dbfleet.innodb.topology_facts',
                   timeout=300)


@pytest.mark.parametrize('host', sorted(WANTED))
def test_service_of_a_lab_server_comes_from_the_os_family_and_flavor(topology, host):
    require_lab_hosts(INVENTORY, [host])
    assert 'debian' in os_release_id() or 'ubuntu' in os_release_id(), 'the lab runs on Debian-family hosts'
    rc, out = topology
    assert rc == 0, out
    assert '%s | SUCCESS' % host in out, out
    result = adhoc_result(host, out)
    service = result['topology']['service']
    # The lab's servers run under no systemd unit (lab.py starts them), so the OS family and flavor name it.
    assert service == dict(name=WANTED[host], source='the debian packages of %s' % WANTED[host]), service
    assert result['changed'] is False
