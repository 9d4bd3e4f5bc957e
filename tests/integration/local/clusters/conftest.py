"""The local lab's clusters for the tests of this directory (dbfleet_testing.clusters): ``cluster`` (Galera galera1-3 +
galera_replica) and ``group`` (Group Replication gr1-3).

Each is started once for the directory (a package: its __init__.py), when not up, and stopped again after the
directory's last test when this started it: a cluster's start (about 30 s for Galera, 15 s for Group Replication) is
paid once, not once per module. Every module still begins with the cluster Synced / every member ONLINE, waited for
here, whatever the module before it did."""
import pytest

from dbfleet_testing.clusters import galera_cluster, gr_group, wait_all_online


@pytest.fixture(scope='package')
def galera_up():
    yield from galera_cluster()


@pytest.fixture(scope='package')
def group_up():
    yield from gr_group()


@pytest.fixture(scope='module')
def cluster(galera_up):
    galera_up.wait_synced()
    return galera_up


@pytest.fixture(scope='module')
def group(group_up):
    wait_all_online(group_up)
    return group_up
