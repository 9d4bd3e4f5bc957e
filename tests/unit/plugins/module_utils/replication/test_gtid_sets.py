# -*- coding: utf-8 -*-
"""gtid_sets.py: GTID sets subtracted as the server does, and errant transactions."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import gtid_sets
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_topology_plan import mysql_facts

U1 = '3e11fa47-71ca-11e1-9e33-c80aa9429562'
U2 = '4e11fa47-71ca-11e1-9e33-c80aa9429562'


def test_mysql_gtid_subtract_as_the_server_does():
    assert gtid_sets.mysql_gtid_subtract(U1 + ':1-100', U1 + ':1-100') == ''
    assert gtid_sets.mysql_gtid_subtract(U1 + ':1-100,\n' + U2 + ':1-3', U1 + ':1-50:60-100') == \
        U1 + ':51-59,' + U2 + ':1-3'
    assert gtid_sets.mysql_gtid_subtract(U1 + ':1-5:tag:1-2', U1 + ':1-5') == U1 + ':tag:1-2'


def test_mariadb_errant_is_a_sequence_beyond_the_primarys_or_a_domain_it_never_wrote():
    assert gtid_sets.mariadb_errant('0-3-100', '0-3-100') == ''
    assert gtid_sets.mariadb_errant('0-3-90', '0-3-100') == ''
    assert gtid_sets.mariadb_errant('0-4-101,1-4-1', '0-3-100') == '0-4-101,1-4-1'


def test_the_position_a_replica_must_reach_and_the_wait_for_it():
    assert gtid_sets.source_position(mysql_facts('u1', 1)) == 'u1:1-5'
    assert gtid_sets.source_position(dict(gtid=dict(model='mariadb', binlog_pos='0-3-9'))) == '0-3-9'
    assert gtid_sets.source_position(dict(gtid=dict(model='mysql', mode='OFF', executed='x'))) is None
    assert gtid_sets.gtid_wait_sql('mariadb')[0].startswith('SELECT MASTER_GTID_WAIT')
