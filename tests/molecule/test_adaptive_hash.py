"""The adaptive_hash role's result on a converged host: running values, drop-in file, nothing pending."""
import os

import pytest

from dbhelpers import global_value

# drop_tables_fleet shares this verifier directory but converges playbooks/drop_tables.yml only.
pytestmark = pytest.mark.skipif(os.environ.get('MOLECULE_SCENARIO_NAME') == 'drop_tables_fleet',
                                reason='this scenario does not apply the roles')

DROPIN = '60-dbfleet-adaptive_hash.cnf'


def _wanted(hostvars):
    enabled = hostvars.get('adaptive_hash_enabled')
    parts = hostvars.get('adaptive_hash_parts')
    if enabled is None and parts is None:
        pytest.skip('this scenario does not set adaptive_hash_enabled or adaptive_hash_parts')
    return enabled, parts


def _dropin(host, dropin_dir):
    return host.file(os.path.join(dropin_dir, DROPIN))


def _on(value):
    return str(value).upper() in ('ON', '1', 'TRUE', 'YES')


def test_ahi_runs_as_configured(db, hostvars):
    enabled, _parts = _wanted(hostvars)
    if enabled is None:
        pytest.skip('adaptive_hash_enabled is null: left alone')
    assert _on(global_value(db, 'innodb_adaptive_hash_index')) is _on(enabled)


def test_dropin_is_managed_and_says_the_same(host, hostvars, dropin_dir):
    enabled, parts = _wanted(hostvars)
    dropin = _dropin(host, dropin_dir)
    assert dropin.exists
    text = dropin.content_string
    assert 'Managed by the dbfleet.innodb.adaptive_hash role' in text
    assert '[mysqld]' in text
    if enabled is not None:
        assert 'innodb_adaptive_hash_index = %s' % ('ON' if _on(enabled) else 'OFF') in text
    if parts is not None:
        assert 'innodb_adaptive_hash_index_parts = %d' % int(parts) in text
    assert dropin.mode == 0o644


def test_partitions_applied_nothing_pending(db, hostvars):
    _enabled, parts = _wanted(hostvars)
    if parts is None:
        pytest.skip('adaptive_hash_parts is null: left alone')
    assert int(global_value(db, 'innodb_adaptive_hash_index_parts')) == int(parts)


def test_only_the_own_dropin_is_written(host, hostvars, dropin_dir):
    _wanted(hostvars)
    names = host.check_output('ls -1 %s' % dropin_dir).split()
    ours = [n for n in names if 'adaptive_hash' in n]
    assert ours == [DROPIN]
