# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # Attributes shared by modules. A module names its own platform details; these fragments say the
    # parts that are the same everywhere.
    # Standard documentation fragment (empty: use one of the named fragments below).
    DOCUMENTATION = r'''
options: {}
'''

    # dbfleet.innodb.attributes.read_only: the module only reads.
    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    description: Reads only; runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to show a difference of.
'''

    # dbfleet.innodb.attributes.pymysql: all the module needs is a PyMySQL connection to the server.
    PYMYSQL = r'''
attributes:
  platform:
    platforms: posix
    support: full
    description: Runs wherever PyMySQL can reach the server.
'''
