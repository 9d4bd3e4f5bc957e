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
