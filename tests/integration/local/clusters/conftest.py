"""The local lab's clusters for the tests of this directory (dbfleet_testing.clusters): ``cluster`` (Galera galera1-3 +
galera_replica) and ``group`` (Group Replication gr1-3), each per module: started when not up, stopped again at the end
of the module when the fixture started it."""
import pytest

from dbfleet_testing.clusters import galera_cluster, gr_group


@pytest.fixture(scope='module')
def cluster():
    yield from galera_cluster()


@pytest.fixture(scope='module')
def group():
    yield from gr_group()
