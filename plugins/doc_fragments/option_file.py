# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # The server's main option file as a fallback, for the modules that read option files (server_facts,
    # desired_settings, verify, memcached_plugin); the rule is plugin_utils/login.py option_file_args().
    DOCUMENTATION = r'''
options:
  fallback_option_files:
    description:
      - Option files to read when the server's process cannot be read from this host (the server runs
        elsewhere, or its pid file is not readable). Without them, what such a server's option files say is
        not known, and the result says so.
      - When the task does not set it (neither in its arguments nor through C(module_defaults)), the
        collection's action plugin sets it to the host variable C(dbfleet_option_file), as a list of that one
        file. An empty string, null or no such variable is unset - nothing is passed, as with V([]).
      - A task that names the server to log in to (O(login_host), O(login_unix_socket) or O(login_port)) gets no
        option file from the host variables, as it gets none of the host's socket (the file is the host's own
        server's).
    type: list
    elements: path
    default: []
'''
