# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded drop's own rules, before any connection (guarded/drop_tables.py runs the drop with them): its options
with their defaults and ranges (DROP_OPTIONS: the module's argument spec and range check, drop_tables.yml's inputs),
the table names it takes, the combinations it refuses, the holding schema's names, and the AHI decision per flavor
and version (decide_ahi). Pure, unit-tested without a server.
"""

from __future__ import annotations

import hashlib

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, parse_table_names as _names
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import AHI
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.staged_removal import STAGED_OPTIONS

LIFT_NEEDS_NO_BINLOG = (
    'lift_super_read_only needs disable_binlog=true: with the binary log on, a drop on a server whose '
    'super_read_only is ON (a replica) is a transaction of its own there (an errant GTID), and replication '
    'stops with error 1051 when the source\'s drop arrives; drop on the source and let it replicate, or drop '
    'host by host with the binary log off for the session')
STAGED_NOT_WITH_RENAME = (
    'file_removal=staged does not go with rename_first: RENAME TABLE keeps the files; stage the drop that purges the '
    'holding schema instead')


# The drop's own options (beside guarded_module.GUARDED_OPTIONS), with their defaults and ranges: the one definition
# the module's argument spec and range check and drop_tables.yml's inputs (playbook_inputs.py) read.
DROP_OPTIONS = dict(
    confirm=dict(type='bool', default=False),
    ahi_strategy=dict(type='str', choices=['auto', 'toggle', 'keep'], default='auto'),
    rename_first=dict(type='bool', default=False),
    holding_schema=dict(type='str', default='dbfleet_holding'),
    disable_binlog=dict(type='bool', default=False),
    lift_super_read_only=dict(type='bool', default=False),
    follow_timeout=dict(type='int', default=600, range=(1, 86400)),
    cancel_file=dict(type='path'),
    run_id=dict(type='str'),
    **STAGED_OPTIONS
)


class DropError(GuardedError):
    """An expected failure of the drop; the message is for the user."""


def parse_table_names(names):
    """Validated, de-duplicated [(db, table)] in the order given; raises GuardedError naming the input."""
    return _names(names, 'dropped')


def holding_name(db, table, stamp):
    """Name of the table in the holding schema: <db>__<table>__<stamp>, at most 64 characters."""
    name = '%s__%s__%s' % (db, table, stamp)
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(('%s.%s' % (db, table)).encode('utf-8')).hexdigest()[:8]
    keep = 64 - len(stamp) - len(digest) - 4
    return '%s_%s__%s' % (('%s__%s' % (db, table))[:keep], digest, stamp)


def decide_ahi(requested, flavor, version, ahi_value, innodb_tables):
    """(strategy, toggle, reason): what to do with AHI around the drops.

    requested: auto | toggle | keep. ahi_value: 'ON'/'OFF' or None (no such variable).
    innodb_tables: how many tables to drop are InnoDB.
    """
    if requested == 'auto':
        strategy = capability_facts.capability('drop_table_ahi_strategy', flavor, version)
        source = 'versions/capability_facts.py drop_table_ahi_strategy for %s %s' % (flavor, flavors.format_version(version))
    else:
        strategy = requested
        source = 'ahi_strategy=%s' % requested
    if ahi_value is None:
        return strategy, False, 'this server has no %s' % AHI
    if ahi_value != 'ON':
        return strategy, False, 'AHI is OFF: nothing to switch (%s: %s)' % (source, strategy)
    if not innodb_tables:
        return strategy, False, 'no InnoDB table to drop: AHI does not matter'
    if strategy == 'toggle':
        return strategy, True, 'AHI is ON and %s is toggle: switch it off before, back on after' % source
    return strategy, False, 'AHI is ON and %s is keep: leave it on' % source
