# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every system variable and option of the lab's real servers, per version: the upgrade check's facts (the
catalog of the package flavor_data, whose data modules it gathers; imported as ``flavor_data``).

Part of the version facts of versions/flavors.py (which keeps the hand-checked spans), in a package of its own because it
is large: only the controller imports it (the verify and verify_fleet action plugins, and upgrade.Target's callers
there); a module gets the one target's facts as data (version_facts.catalog_data), so no module payload carries the
four versions. Each data module (mysql_8_0, mysql_9_7, mariadb_10_11, mariadb_11_8) is written by
lab/read_flavor_data.py from a private server started on a fresh datadir with no setting of its own (SOURCE says which server, how it was
read and when) and asserted against every lab server of its version by tests/integration/local/flavors/test_flavor_data.py.
The rule of what is kept: every global system variable of that server and every option name of its binary.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import mariadb_10_11
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import mariadb_11_8
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import mysql_8_0
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import mysql_9_7
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.facts import VersionFacts

_MODULES = (mysql_8_0, mysql_9_7, mariadb_10_11, mariadb_11_8)

FACTS = dict(((f.flavor, f.version[:2]), f) for f in (VersionFacts.from_module(m) for m in _MODULES))


def facts_for(flavor, version):
    """The VersionFacts of flavor and version's major.minor (the lab's server of that series), or None."""
    return FACTS.get((flavor, tuple(version)[:2]))


def known_versions():
    """['mariadb 10.11.19', ...]: the versions this package has facts of."""
    return sorted(f.label for f in FACTS.values())
