# -*- coding: utf-8 -*-
"""What one run of dbfleet.innodb.verify compiles on every host (AnsiballZ runs module_utils from a zip, compiled on
each run): only what the audit of explicit settings uses. The code of the report's renderers, the topology and
clusters' plans, the restart path, the roles' own modules, upgrades and storage detection is loaded only where a
role or a target needs it (imports inside the functions that need them): a role's desired-state code (module_utils/roles/states.py
for the InnoDB roles, module_utils/roles/settings.py for the settings role, with the input checks and the option-file writer they use)
only when that role is audited, the cluster reading (replication/clusters.py) only for a server that may be a cluster member."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PREFIX = 'ansible_collections.dbfleet.innodb.plugins.module_utils.'
# The role functions of every role, the option-file writer and the role input checks they use (none is audited in an
# audit of explicit settings), the cluster reading, the storage engines' code (only with a target or for myrocks) and
# the off-peak windows' parser (only the controller-side audit reads cached times).
ROLE_CODE = ('roles.states', 'roles.flush_neighbors', 'roles.memcached', 'roles.inputs', 'roles.option_writer',
             'roles.settings', 'roles.redo_log', 'memcache.plugin', 'memcache.containers', 'memcache.daemon_options')
NOT_LOADED = ('report.build', 'replication.topology', 'restart.service_restart', 'versions.upgrade', 'host.storage',
              'host.block_devices', 'host.storage_probe',
              'restart.refused_start', 'restart.dropin_backups', 'replication.topology_plan', 'replication.restart_gate',
              'replication.cluster_switchover', 'replication.cluster_drain', 'versions.upgrade_settings',
              'audit.upgrade_evidence',
              'versions.facts', 'versions.flavor_data', 'host.private_paths', 'replication.clusters', 'storage_engines',
              'offpeak') + ROLE_CODE


def loaded_by(code, setup='import ansible.module_utils.basic'):
    """The modules that running code loads, in a fresh interpreter after setup (the collection's module_utils by
    their short name, then every module's full name)."""
    program = ('import sys, json; %s; before = set(sys.modules)\n%s\n'
               'print(json.dumps(sorted(set(sys.modules) - before)))' % (setup, code))
    out = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    return sorted(m[len(PREFIX):] for m in loaded if m.startswith(PREFIX)), loaded


def loaded_by_import(module):
    """The collection's module_utils and the standard library modules that importing module loads, in a fresh
    interpreter (what the module's run loads before main())."""
    return loaded_by('import %s' % module)[1]


def test_an_audit_of_settings_loads_no_role_report_or_topology_code():
    loaded = loaded_by_import('ansible_collections.dbfleet.innodb.plugins.modules.verify')
    ours = sorted(m[len(PREFIX):] for m in loaded if m.startswith(PREFIX))
    assert 'audit.verify' in ours and 'login.connection' in ours and 'host.os_facts' in ours and 'masking' in ours
    assert not set(ours) & set(NOT_LOADED), ours
    # nor the standard library's mail / HTTP stack (xml.sax.saxutils pulls urllib.request), zoneinfo or difflib
    assert not [m for m in loaded if m.split('.')[0] in ('urllib', 'email', 'http', 'zoneinfo', 'difflib')], loaded


def test_a_role_audit_loads_the_code_of_the_audited_role_only():
    setup = 'from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired'
    ours, _loaded = loaded_by("desired.RECORDS['settings'].function", setup)
    assert 'roles.settings' in ours and 'roles.inputs' in ours and 'roles.option_writer' in ours
    assert 'roles.states' not in ours and 'memcache.daemon_options' not in ours, ours
    ours, _loaded = loaded_by("desired.RECORDS['adaptive_hash'].function", setup)
    assert 'roles.states' in ours and 'roles.inputs' in ours and 'roles.option_writer' in ours
    assert 'roles.settings' not in ours and 'memcache.daemon_options' not in ours and 'host.storage' not in ours, ours
    assert 'roles.flush_neighbors' not in ours and 'roles.memcached' not in ours, ours


# A server that answers SHOW GLOBAL VARIABLES / STATUS with the given values (tests/unit/fixtures/fake_db.py).
FAKE_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'fixtures')


def cluster_info_loads(version, variables):
    setup = ('from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership\n'
             'from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity\n'
             'sys.path.insert(0, %r)\nfrom fake_db import variables_server\n'
             'identity = server_identity.identity_from_variables(dict(version=%r, version_comment=""))' % (FAKE_SERVER, version))
    ours, _loaded = loaded_by('print(json.dumps(membership.cluster_info(variables_server(%r, {}), identity)))' % (variables,), setup)
    return ours


def test_the_cluster_reading_is_loaded_for_a_cluster_member_only():
    # standalone servers: MariaDB without wsrep_on, MySQL without a group name (or without the plugin's variables)
    assert 'replication.clusters' not in cluster_info_loads('10.11.19-MariaDB', dict(wsrep_on='OFF', wsrep_provider='none'))
    assert 'replication.clusters' not in cluster_info_loads('8.0.44', dict(group_replication_group_name=''))
    assert 'replication.clusters' not in cluster_info_loads('8.0.44', {})
    # a Galera node and a Group Replication member: read by replication/clusters.py
    assert 'replication.clusters' in cluster_info_loads('10.11.19-MariaDB', dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera.so'))
    assert 'replication.clusters' in cluster_info_loads('8.0.44', dict(group_replication_group_name='aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'))
