# -*- coding: utf-8 -*-
# Copyright: dbfleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host with a packaged server says about it when the inventory says nothing (docs/hosts.md).

On a user's host the server comes from a package and runs under systemd; the inventory gives only
where to connect and `become`. The collection then finds, on the host itself:

- the login: the server's unix socket, as the MySQL and MariaDB clients find it (the `socket` of the
  client groups of the system option files, else where the OS family's packages put it), and the user
  the module runs as (root, with `become`): MariaDB's packages let root in through `unix_socket`
  authentication, MySQL's on Debian through `auth_socket`; a password comes from `~/.my.cnf` or
  `dbfleet_login_*` (local_socket());
- the drop-in directory: the last directory the server's own option files include (`!includedir`),
  so that a role's file is read after the package's own (dropin_dir());
- the systemd unit: from `/proc/PID/cgroup` of the server's process (unit_of_process()).

Each answer comes with where it was found, or why nothing was, naming the variable that tells it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

# The system-wide option files MySQL's and MariaDB's clients read, in their order (~/.my.cnf follows:
# that one is the module's config_file).
CLIENT_SYSTEM_FILES = ('/etc/my.cnf', '/etc/mysql/my.cnf')

SOCKET_VARIABLE = 'dbfleet_login_unix_socket'
DROPIN_VARIABLE = 'dbfleet_option_dropin_dir'
SERVICE_VARIABLE = 'dbfleet_service_name'


def is_socket(path):
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (IOError, OSError):
        return False


def _read_text(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return None


def client_socket(files=CLIENT_SYSTEM_FILES, read_client_file=optionfiles.read_client_file):
    """(socket, file) that the system option files give a client (the last one wins), or (None, None).
    A file the client would refuse is skipped here; the connection's own reading reports it."""
    found = (None, None)
    for path in files:
        if not os.path.isfile(path):
            continue
        try:
            value = read_client_file(path).get('socket')
        except (ValueError, IOError, OSError):
            continue
        if value:
            found = (value, path)
    return found


def local_socket(os_release_text=None, files=CLIENT_SYSTEM_FILES, check=is_socket,
                 read_client_file=optionfiles.read_client_file):
    """dict(path, source) of the local server's socket when the login options name no server, or
    dict(path=None, source=why). Found as a client finds it: the system option files' client groups,
    else the packages' place for the OS family (os_facts.FAMILIES; then the other families' places).
    os_release_text: the text of /etc/os-release (default: this host's, os_facts.host_family())."""
    path, where = client_socket(files, read_client_file)
    if path and check(path):
        return dict(path=path, source='socket of the client groups in %s' % where)
    family = os_facts.host_family() if os_release_text is None else os_facts.family(os_release_text)
    own = os_facts.fact(family, 'sockets', ())
    tried = [path] if path else []
    order = list(own)
    for other in sorted(os_facts.FAMILIES):
        order.extend(p for p in os_facts.FAMILIES[other]['sockets'] if p not in order)
    for candidate in order:
        tried.append(candidate)
        if check(candidate):
            return dict(path=candidate, source="where the %s packages put the server's socket"
                        % (family if candidate in own else 'other OS families\''))
    return dict(path=None, source='no server socket at %s; set %s (or dbfleet_login_host)'
                % (', '.join(tried), SOCKET_VARIABLE))


def dropin_dir(option_files_result):
    """dict(path, source) of the drop-in directory: the last directory the server's option files
    include (!includedir), so a role's file is read after everything the package ships; path None
    (with why) when the files include no directory."""
    dirs = list(getattr(option_files_result, 'includedirs', None) or [])
    if not dirs:
        read = getattr(option_files_result, 'files_read', None) or []
        return dict(path=None, source='the server\'s option files (%s) include no directory; set %s'
                    % (', '.join(read) or 'none read', DROPIN_VARIABLE))
    path, included_by = dirs[-1]
    return dict(path=path.rstrip('/') or '/', source='the last !includedir of the server\'s option files (in %s)'
                % included_by)


def unit_of_process(pid, proc_root='/proc'):
    """dict(name, source) of the systemd service running process pid (a database server's unit only),
    or dict(name=None, source=why)."""
    if not pid:
        return dict(name=None, source='the server\'s process is not visible here; set %s' % SERVICE_VARIABLE)
    text = _read_text(os.path.join(proc_root, str(pid), 'cgroup'))
    if text is None:
        return dict(name=None, source='cannot read %s/%s/cgroup; set %s' % (proc_root, pid, SERVICE_VARIABLE))
    unit = unit_of_cgroup(text)
    if unit is None:
        return dict(name=None, source='process %s runs under no database server unit of systemd; set %s'
                    % (pid, SERVICE_VARIABLE))
    return dict(name=unit, source='%s/%s/cgroup' % (proc_root, pid))


# A unit counts only when its name says it runs a database server: a mysqld started by hand from a
# shell under another service (a CI agent, a job runner) sits in that service's cgroup, which must
# never be what a restart restarts.
SERVER_UNIT_WORDS = ('mysql', 'mariadb', 'percona')


def unit_of_cgroup(cgroup_text):
    """The systemd service of a database server whose cgroup holds a process (from /proc/PID/cgroup),
    or None (no service, or one whose name does not say mysql, mariadb or percona)."""
    for line in (cgroup_text or '').splitlines():
        path = line.rpartition(':')[2]
        for part in reversed(path.split('/')):
            if part.endswith('.service'):
                unit = part[:-len('.service')]
                return unit if any(w in unit.lower() for w in SERVER_UNIT_WORDS) else None
    return None


def service_name(flavor, os_family, cgroup_text=None):
    """dict(name, source) of the service that restarts this server: the systemd unit running it when
    there is one, else the unit the OS family's packages install for the flavor (os_facts.FAMILIES; os_family
    as os_facts.family() names it); name None when neither tells (the restart then needs dbfleet_service_name)."""
    unit = unit_of_cgroup(cgroup_text)
    if unit:
        return dict(name=unit, source='the systemd unit running the server')
    name = os_facts.fact(os_family, 'services', {}).get(flavor)
    if name:
        return dict(name=name, source='the %s packages of %s' % (os_family, flavor))
    return dict(name=None, source='unknown: OS family %s, flavor %s' % (os_family or 'not recognised', flavor))
