"""The adaptive_hash role's result on a converged host: running values, drop-in file, nothing pending; a setting the
inventory leaves null is left alone (the drop-in names it not).

The scenarios that converge the role name this file in their verifier; it runs on the hosts whose inventory sets
adaptive_hash_enabled or adaptive_hash_parts (the role manages something there), each check on the hosts it applies to.
"""
import os

import pytest

from dbhelpers import global_value

DROPIN = '60-dbfleet-adaptive_hash.cnf'
SETTINGS = (('adaptive_hash_enabled', 'innodb_adaptive_hash_index'),
            ('adaptive_hash_parts', 'innodb_adaptive_hash_index_parts'))


def _sets(var):
    return lambda hostvars: hostvars.get(var) is not None


def _leaves_alone(hostvars):
    return any(hostvars.get(var) is None for var, _name in SETTINGS)


def _manages(hostvars):
    return any(hostvars.get(var) is not None for var, _name in SETTINGS)


pytestmark = pytest.mark.hosts(applies=_manages)


def _dropin(host, dropin_dir):
    return host.file(os.path.join(dropin_dir, DROPIN))


def _dropin_names(text):
    """The option names the drop-in sets (its `name = value` lines; loose- prefix dropped, dashes as underscores)."""
    names = [line.split('=', 1)[0].strip().replace('-', '_') for line in text.splitlines()
             if '=' in line and not line.lstrip().startswith(('#', ';'))]
    return [name[len('loose_'):] if name.startswith('loose_') else name for name in names]


def _on(value):
    return str(value).upper() in ('ON', '1', 'TRUE', 'YES')


@pytest.mark.hosts(applies=_sets('adaptive_hash_enabled'))
def test_ahi_runs_as_configured(db, hostvars):
    assert _on(global_value(db, 'innodb_adaptive_hash_index')) is _on(hostvars['adaptive_hash_enabled'])


def test_dropin_is_managed_and_says_the_same(host, hostvars, dropin_dir):
    enabled, parts = hostvars.get('adaptive_hash_enabled'), hostvars.get('adaptive_hash_parts')
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


@pytest.mark.hosts(applies=_leaves_alone)
def test_null_settings_are_left_alone(host, hostvars, dropin_dir):
    """A setting whose variable is null: the role writes no line for it (the server keeps what it had)."""
    left_alone = [name for var, name in SETTINGS if hostvars.get(var) is None]
    assert left_alone
    named = _dropin_names(_dropin(host, dropin_dir).content_string)
    assert [name for name in left_alone if name in named] == [], named


@pytest.mark.hosts(applies=_sets('adaptive_hash_parts'))
def test_partitions_applied_nothing_pending(db, hostvars):
    assert int(global_value(db, 'innodb_adaptive_hash_index_parts')) == int(hostvars['adaptive_hash_parts'])


def test_only_the_own_dropin_is_written(host, dropin_dir):
    names = host.check_output('ls -1 %s' % dropin_dir).split()
    ours = [n for n in names if 'adaptive_hash' in n]
    assert ours == [DROPIN]
