# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""restart_gate: what waiting does not mend for a cluster member."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.modules import restart_gate

UUID = '24b97d40-e8cf-11f1-b24a-c7da101eb7b5'


def facts(name):
    return dict(server_id=2, channels=[], cluster=dict(kind='galera', name=name, state='Synced'))


def test_a_member_back_in_another_cluster_shuts_the_gate_at_once():
    stuck = restart_gate.hopeless(facts('a-new-uuid'), dict(expect_cluster=UUID))
    assert stuck == ['member of another cluster (a-new-uuid) than %s: it formed or joined a new one' % UUID]


def test_the_same_cluster_or_no_expectation_is_not_hopeless():
    assert restart_gate.hopeless(facts(UUID), dict(expect_cluster=UUID)) == []
    assert restart_gate.hopeless(facts('a-new-uuid'), {}) == []
    # Not a member (yet): the gate waits, it may still join.
    assert restart_gate.hopeless(dict(server_id=2, channels=[], cluster=None), dict(expect_cluster=UUID)) == []


def test_a_look_may_block_no_longer_than_the_time_left_and_a_margin():
    # A member whose recovery channel is still connecting to a donor that drops its packets held
    # SHOW REPLICA STATUS for ~60 s: the gate of timeout 8 shut after 55 s. Reads are bounded now.
    assert restart_gate.read_timeout(1000.0, 992.0) == 8 + restart_gate.READ_MARGIN
    assert restart_gate.read_timeout(1000.0, 1003.0) == restart_gate.READ_MARGIN


def test_a_look_opens_its_connection_with_that_read_timeout(monkeypatch):
    seen = {}

    def refuse(params):
        seen.update(params)
        raise restart_gate.conn_utils.ConnectError('refused')
    monkeypatch.setattr(restart_gate.conn_utils, 'open_connection', refuse)
    monkeypatch.setattr(restart_gate.time, 'time', lambda: 992.0)
    facts, problems, conn = restart_gate.look(dict(connect_timeout=30), {}, deadline=1000.0)
    assert facts is None and conn is None and problems == ['the server does not answer: refused']
    assert seen['read_timeout'] == 8 + restart_gate.READ_MARGIN and seen['connect_timeout'] == 5
