# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What differs between Linux families, written down once, and the host's family read once.

FAMILIES is the one table of per-OS facts the collection uses: where each family's packages put the server's
socket (the login's fallback, discovery.local_socket()), the drop-in directory their option files include
(desired.dropin_file()), and the systemd unit they install per server flavor (discovery.service_name()).
family() reads the text of /etc/os-release; host_family() reads this host's file once per process.

Small on purpose, and free of the topology and cluster code: every module's login (login/connection.py) imports it.
"""

from __future__ import annotations

OS_RELEASE = '/etc/os-release'

# Keyed by family; name: the family as Ansible's ansible_facts.os_family spells it.
# sockets: Debian/Ubuntu mariadb-server, mysql-server, percona-server-server put it in /run/mysqld; RHEL family
# mariadb-server, mysql-community-server, Percona-Server-server in /var/lib/mysql.
# datadirs: the data directory the packages make for the server, owned by the user it runs as (evidence of that user
# for login/loopback.py).
# dropin_dir: the directory the packages' option files include (a role's 60-dbfleet-<role>.cnf goes there when
# the server's own files and the inventory say nothing).
# services: the unit the packages install, by flavor (versions/flavors.py's names; Aurora is not restarted through a
# service): Debian and Ubuntu mysql-server / percona-server-server ship mysql.service, mariadb-server ships
# mariadb.service; RHEL-family mysql-community-server and Percona ship mysqld.service, mariadb-server
# mariadb.service.
FAMILIES = {
    'debian': dict(name='Debian', sockets=('/run/mysqld/mysqld.sock', '/var/run/mysqld/mysqld.sock'),
                   datadirs=('/var/lib/mysql',), dropin_dir='/etc/mysql/conf.d',
                   services={'mysql': 'mysql', 'percona': 'mysql', 'mariadb': 'mariadb'}),
    'redhat': dict(name='RedHat', sockets=('/var/lib/mysql/mysql.sock', '/run/mysqld/mysqld.sock'),
                   datadirs=('/var/lib/mysql',), dropin_dir='/etc/my.cnf.d',
                   services={'mysql': 'mysqld', 'percona': 'mysqld', 'mariadb': 'mariadb'}),
}

# os-release ID / ID_LIKE words -> the family.
RELEASE_WORDS = {'debian': 'debian', 'ubuntu': 'debian', 'rhel': 'redhat', 'fedora': 'redhat',
                 'centos': 'redhat', 'rocky': 'redhat', 'almalinux': 'redhat', 'ol': 'redhat'}


def family(os_release_text):
    """'debian', 'redhat' or None, from the text of /etc/os-release (ID first, then ID_LIKE)."""
    fields = {}
    for line in (os_release_text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep:
            fields[key.strip()] = value.strip().strip('"\'')
    for word in [fields.get('ID', '')] + fields.get('ID_LIKE', '').split():
        if word.lower() in RELEASE_WORDS:
            return RELEASE_WORDS[word.lower()]
    return None


_HOST = {}


def host_family(path=OS_RELEASE):
    """family() of this host's os-release file (None when it cannot be read), read once per process."""
    if path not in _HOST:
        try:
            with open(path, 'rb') as handle:
                text = handle.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            text = None
        _HOST[path] = family(text)
    return _HOST[path]


def fact(os_family, key, default=None):
    """FAMILIES[os_family][key], or default for a family the table does not know (None included)."""
    return FAMILIES.get(os_family, {}).get(key, default)


def display_name(os_family):
    """The family as Ansible names it (Debian, RedHat), or the word given when the table does not know it."""
    return fact(os_family, 'name', os_family)
