# -*- coding: utf-8 -*-
"""writer_endpoint.py: the HAProxy runtime API commands of each switchover step, against a fake socket."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import writer_endpoint

HEADER = ('1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight '
          'srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state '
          'srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port '
          'srv_check_addr srv_agent_addr srv_agent_port\n')


def state_text(states):
    admin = dict(ready=0, maint=1, drain=8)
    rows = ['3 writer_db1 %d %s 10.0.0.%d 2 %d 1 1 5 1 0 0 0 0 0 0 - 3306 - 0 0 - - 0'
            % (i + 1, name, 11 + i, admin[state]) for i, (name, state) in enumerate(states.items())]
    return HEADER + '\n'.join(rows) + '\n\n'


class FakeHAProxy:
    def __init__(self, **states):
        self.states = dict(states)
        self.ran = []

    def __call__(self, path, text):
        self.ran.append(text)
        if text.startswith('show servers state'):
            return state_text(self.states)
        if text.startswith('set server'):
            target, _word, state = text[len('set server '):].split(' ')
            self.states[target.split('/')[1]] = state
        return '\n'


def test_states_are_read_from_the_admin_state_bits():
    assert writer_endpoint.server_states(state_text(dict(db1='ready', db2='maint', db3='drain'))) == dict(
        db1='ready', db2='maint', db3='drain')


def test_each_step_sets_what_it_needs_in_order_and_says_it():
    lb = FakeHAProxy(db1='ready', db2='maint')
    out = writer_endpoint.move('/s', 'writer_db1', 'drained', 'db1', 'db2', run=lb)
    assert out['commands'] == ['set server writer_db1/db1 state drain'] and out['after']['db1'] == 'drain'
    out = writer_endpoint.move('/s', 'writer_db1', 'moved', 'db1', 'db2', run=lb)
    assert out['commands'] == ['set server writer_db1/db2 state ready', 'set server writer_db1/db1 state maint',
                               'shutdown sessions server writer_db1/db1']
    assert lb.states == dict(db1='maint', db2='ready')
    again = writer_endpoint.move('/s', 'writer_db1', 'moved', 'db1', 'db2', run=lb)
    assert not again['changed'] and again['msg'] == 'writer_db1 already moved'
    out = writer_endpoint.move('/s', 'writer_db1', 'restored', 'db1', 'db2', run=lb)
    assert lb.states == dict(db1='ready', db2='maint') and out['changed']


def test_check_mode_names_the_commands_and_runs_none_and_an_unknown_server_is_refused():
    lb = FakeHAProxy(db1='ready', db2='maint')
    out = writer_endpoint.move('/s', 'writer_db1', 'moved', 'db1', 'db2', check_mode=True, run=lb)
    assert out['msg'].startswith('would run set server writer_db1/db2 state ready; ')
    assert [c for c in lb.ran if not c.startswith('show')] == []
    with pytest.raises(ValueError, match='backend writer_db1 has no server db9'):
        writer_endpoint.move('/s', 'writer_db1', 'moved', 'db1', 'db9', run=lb)
