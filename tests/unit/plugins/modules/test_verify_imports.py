# -*- coding: utf-8 -*-
"""What one run of dbfleet.innodb.verify compiles on every host (AnsiballZ runs module_utils from a zip, compiled on
each run): only what the audit of explicit settings uses. The code of the report's renderers, the topology and
clusters' plans, the restart path, the roles' own modules, upgrades and storage detection is loaded only where a
role or a target needs it (imports inside the functions that need them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PREFIX = 'ansible_collections.dbfleet.innodb.plugins.module_utils.'
NOT_LOADED = ('verify_report', 'topology', 'service_restart', 'memcached', 'settings', 'upgrade', 'storage',
              'version_facts', 'flavor_data', 'private_paths')


def loaded_by_import(module):
    """The collection's module_utils and the standard library modules that importing module loads, in a fresh
    interpreter (what the module's run loads before main())."""
    code = ('import sys, json; import ansible.module_utils.basic; before = set(sys.modules); import %s; '
            'print(json.dumps(sorted(set(sys.modules) - before)))' % module)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_audit_of_settings_loads_no_role_report_or_topology_code():
    loaded = loaded_by_import('ansible_collections.dbfleet.innodb.plugins.modules.verify')
    ours = sorted(m[len(PREFIX):] for m in loaded if m.startswith(PREFIX))
    assert 'verify' in ours and 'connection' in ours and 'os_facts' in ours and 'masking' in ours
    assert not set(ours) & set(NOT_LOADED), ours
    # nor the standard library's mail / HTTP stack (xml.sax.saxutils pulls urllib.request), zoneinfo or difflib
    assert not [m for m in loaded if m.split('.')[0] in ('urllib', 'email', 'http', 'zoneinfo', 'difflib')], loaded
