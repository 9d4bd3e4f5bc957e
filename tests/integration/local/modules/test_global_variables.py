"""dbfleet.innodb.global_variables against every lab server, run the way users run it (ansible-playbook).

Every case is a task of one playbook run over all the lab's servers at -vvvv (ansible's cost is per process, not per
module call: dbfleet_testing.task_runs); between the calls the run reads the server with the tests' own connection
(lookup lab_sql), and each test reads its tasks' results by name and host."""
import os

import pytest
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.servers import socket_global_value, socket_sql
from dbfleet_testing.task_runs import task_run

from dbfleet_testing.lab import REPO as ROOT
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')


def lab_hosts():
    return require_lab_hosts(INVENTORY)


HOSTS = lab_hosts()
# The hosts of test_setter_and_verify_agree_on_suffixes_and_ranges.
IO_HOSTS = sorted(h for h in HOSTS if h in ('mysql80', 'mariadb1011'))

# The tests' cases in their order, on each host at once; `case` is the host's entry of the extra var `cases`
# (target: a value other than the running one, read_only_value: another one again).
BOOK = r"""
- name: The cases of test_global_variables.py on each lab server
  hosts: all
  gather_facts: false
  vars:
    case: "{{ cases[inventory_hostname] }}"
    login: &login
      login_unix_socket: "{{ dbfleet_login_unix_socket }}"
      login_user: "{{ dbfleet_login_user }}"
      login_password: "{{ dbfleet_login_password }}"
    flush_neighbors: "{{ query('lab_sql', 'SELECT @@GLOBAL.innodb_flush_neighbors AS v')[0].v | string }}"
    io_capacity: "{{ query('lab_sql', 'SELECT @@GLOBAL.innodb_io_capacity AS v')[0].v | string }}"
    io_capacities: "{{ query('lab_sql', 'SELECT @@GLOBAL.innodb_io_capacity_max AS m, @@GLOBAL.innodb_io_capacity AS c')[0] }}"
  tasks:
    - name: check mode
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: "{{ case.target }}"}
      check_mode: true

    - name: flush_neighbors after check mode
      ansible.builtin.debug: {msg: "{{ flush_neighbors }}"}

    - name: read-only variable
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: "{{ case.read_only_value }}", innodb_adaptive_hash_index_parts: 16}
      ignore_errors: true

    - name: flush_neighbors after the read-only variable
      ansible.builtin.debug: {msg: "{{ flush_neighbors }}"}

    - name: bad values
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: lots, innodb_adaptive_hash_index: maybe}
      ignore_errors: true

    - name: persist in check mode
      dbfleet.innodb.global_variables:
        <<: *login
        persist: true
        variables: {innodb_flush_neighbors: 1}
      check_mode: true
      ignore_errors: true

    - name: set 2
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: 2}
      ignore_errors: true

    - name: flush_neighbors after set 2
      ansible.builtin.debug: {msg: "{{ flush_neighbors }}"}

    - name: set '2' again
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: '2'}
      ignore_errors: true

    - name: set 1
      dbfleet.innodb.global_variables:
        <<: *login
        variables: {innodb_flush_neighbors: 1}
      ignore_errors: true

    - name: The setter and verify on suffixes and ranges
      when: inventory_hostname in io_hosts
      block:
        - name: set innodb_io_capacity 1K
          dbfleet.innodb.global_variables:
            <<: *login
            variables: {innodb_io_capacity: 1K}
          ignore_errors: true

        - name: io_capacity after 1K
          ansible.builtin.debug: {msg: "{{ io_capacity }}"}

        - name: verify 1K
          dbfleet.innodb.verify:
            <<: *login
            settings: {innodb_io_capacity: 1K}
          ignore_errors: true

        - name: set innodb_io_capacity 50
          dbfleet.innodb.global_variables:
            <<: *login
            variables: {innodb_io_capacity: 50}
          ignore_errors: true

        - name: io_capacity after 50
          ansible.builtin.debug: {msg: "{{ io_capacity }}"}

        - name: verify 50
          dbfleet.innodb.verify:
            <<: *login
            settings: {innodb_io_capacity: 50}
          ignore_errors: true

        # In the order given: the maximum first, then a capacity above the running maximum (MySQL would keep a
        # capacity set first at the running maximum, and the module's read-back would fail the task).
        - name: raise the capacity and its maximum, in check mode
          dbfleet.innodb.global_variables:
            <<: *login
            variables: {innodb_io_capacity_max: "{{ case.io_max }}", innodb_io_capacity: "{{ case.io_capacity }}"}
          check_mode: true
          diff: true
          ignore_errors: true

        - name: raise the capacity and its maximum
          dbfleet.innodb.global_variables:
            <<: *login
            variables: {innodb_io_capacity_max: "{{ case.io_max }}", innodb_io_capacity: "{{ case.io_capacity }}"}
          diff: true
          ignore_errors: true

        - name: io_capacity and its maximum after the raise
          ansible.builtin.debug: {msg: "{{ io_capacities }}"}
"""


@pytest.fixture(scope='module')
def cases(tmp_path_factory):
    """The one run of every case (at -vvvv: test_password_never_in_output reads all of its output), with each host's
    running values before it; the values are put back over the socket afterwards (the module's own run is what the
    tests check, not a second run to clean up)."""
    original = dict((name, socket_global_value(hv, 'innodb_flush_neighbors')) for name, hv in HOSTS.items())
    io_original = dict((name, socket_global_value(HOSTS[name], 'innodb_io_capacity')) for name in IO_HOSTS)
    io_max_original = dict((name, socket_global_value(HOSTS[name], 'innodb_io_capacity_max')) for name in IO_HOSTS)
    extra = dict(io_hosts=IO_HOSTS, cases=dict(
        (name, dict(target=2 if int(value) != 2 else 1, read_only_value=0 if value != '0' else 1))
        for name, value in original.items()))
    for name, value in io_max_original.items():
        # Both above the running maximum: only the maximum first gets there.
        extra['cases'][name].update(io_max=2 * int(value), io_capacity=int(value) + 500)
    try:
        run = task_run(INVENTORY, BOOK, tmp_path_factory.mktemp('global_variables'), extra, verbosity=4)
        yield run, original, extra['cases']
    finally:
        for name, hv in HOSTS.items():
            socket_sql(hv, 'SET GLOBAL innodb_flush_neighbors = %s', (int(original[name]),))
        for name, value in io_original.items():
            socket_sql(HOSTS[name], 'SET GLOBAL innodb_io_capacity = %s', (int(value),))
            socket_sql(HOSTS[name], 'SET GLOBAL innodb_io_capacity_max = %s', (int(io_max_original[name]),))
    for name, hv in HOSTS.items():
        assert socket_global_value(hv, 'innodb_flush_neighbors') == original[name], name
    for name, value in io_original.items():
        assert socket_global_value(HOSTS[name], 'innodb_io_capacity') == value, name
        assert socket_global_value(HOSTS[name], 'innodb_io_capacity_max') == io_max_original[name], name


@pytest.fixture(params=sorted(HOSTS) or ['none'])
def lab_host(request, cases):
    name = request.param
    return name, HOSTS[name], cases


def test_check_mode_predicts_and_changes_nothing(lab_host):
    name, _hv, (run, original, wanted) = lab_host
    current = int(original[name])
    assert wanted[name]['target'] != current
    result = run('check mode', name)
    assert result['changed'] is True
    assert result['variables']['innodb_flush_neighbors']['before'] == str(current)
    assert int(run('flush_neighbors after check mode', name)['msg']) == current


def test_set_then_idempotent_in_any_spelling(lab_host):
    name, _hv, (run, _original, _wanted) = lab_host
    result = run('set 2', name)
    assert not result['failed'], result.get('msg')
    assert run('flush_neighbors after set 2', name)['msg'] == '2'
    again = run("set '2' again", name)
    assert not again['failed'], again.get('msg')
    assert again['changed'] is False


def test_read_only_variable_is_refused_and_nothing_changes(lab_host):
    name, _hv, (run, _original, wanted) = lab_host
    before = run('flush_neighbors after check mode', name)['msg']
    assert wanted[name]['read_only_value'] != int(before)
    result = run('read-only variable', name)
    assert result['failed'] is True
    assert 'innodb_adaptive_hash_index_parts is read-only' in result['msg']
    assert run('flush_neighbors after the read-only variable', name)['msg'] == before


def test_bad_values_name_the_input(lab_host):
    name, _hv, (run, _original, _wanted) = lab_host
    result = run('bad values', name)
    assert result['failed'] is True
    assert "innodb_flush_neighbors: 'lots' is not an integer" in result['msg']
    assert "innodb_adaptive_hash_index: 'maybe' is not a boolean" in result['msg']


def test_persist_only_where_it_exists(lab_host):
    name, hv, (run, _original, _wanted) = lab_host
    result = run('persist in check mode', name)
    if hv['dbfleet_lab_expected_flavor'] == 'mysql' and int(str(hv['dbfleet_lab_expected_version']).split('.', maxsplit=1)[0]) >= 8:
        assert not result['failed'], result.get('msg')
    else:
        assert result['failed'] is True and 'SET PERSIST does not exist' in result['msg']


def test_password_never_in_output(lab_host):
    name, hv, (run, _original, _wanted) = lab_host
    result = run('set 1', name)
    assert not result['failed'], result.get('msg')
    assert 'ESTABLISH LOCAL CONNECTION' in run.output      # the run was at -vvvv
    assert hv['dbfleet_login_password'] not in run.output


@pytest.mark.parametrize('host', IO_HOSTS or ['none'])
def test_setter_and_verify_agree_on_suffixes_and_ranges(host, cases):
    """innodb_io_capacity written 1K: global_variables sets 1024 and verify finds 1024 in place; 50 (below
    the minimum 100) is refused by both with the same message, and nothing is changed."""
    run, _original, _wanted = cases
    result = run('set innodb_io_capacity 1K', host)
    assert not result['failed'], result.get('msg')
    assert run('io_capacity after 1K', host)['msg'] == '1024'
    audit = run('verify 1K', host)
    assert not audit['failed'], audit.get('msg')
    item = audit['variables']['innodb_io_capacity']
    # Running right; only set at runtime, so a restart would lose it.
    assert item['desired_normalized'] == '1024' and item['status'] in ('ok', 'drift_config'), item

    refused = run('set innodb_io_capacity 50', host)
    assert refused['failed'] is True
    assert 'innodb_io_capacity: 50 is below the minimum 100' in refused['msg']
    assert run('io_capacity after 50', host)['msg'] == '1024'
    audit = run('verify 50', host)
    item = audit['variables']['innodb_io_capacity']
    assert item['status'] == 'error' and '50 is below the minimum 100' in item['notes'][0], item


@pytest.mark.parametrize('host', IO_HOSTS)
def test_variables_are_set_in_the_order_given(host, cases):
    """innodb_io_capacity_max, then innodb_io_capacity above the running maximum, in one run: check mode and --diff
    say that order, the run sets both (on MySQL the other order leaves the capacity at the maximum and fails)."""
    run, _original, wanted = cases
    case = wanted[host]
    predicted = run('raise the capacity and its maximum, in check mode', host)
    assert not predicted['failed'] and predicted['changed'] is True, predicted.get('msg')
    assert predicted['order'] == ['innodb_io_capacity_max', 'innodb_io_capacity'], predicted
    assert list(predicted['diff']['after'].items()) == [('innodb_io_capacity_max', str(case['io_max'])),
                                                        ('innodb_io_capacity', str(case['io_capacity']))], predicted
    done = run('raise the capacity and its maximum', host)
    assert not done['failed'], done.get('msg')
    assert done['order'] == predicted['order'] and done['diff'] == predicted['diff'], (done, predicted)
    now = run('io_capacity and its maximum after the raise', host)['msg']
    assert (str(now['m']), str(now['c'])) == (str(case['io_max']), str(case['io_capacity'])), now
