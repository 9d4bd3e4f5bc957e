# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # Options of every guarded-change module (drop_tables, convert_tables) that mean the same in each:
    # the off-peak window gate (module_utils/guarded/module.py module_window_gate and module_utils/guarded/engine.py GuardedChange.window_closed)
    # and the pause between lock attempts.
    DOCUMENTATION = r'''
options:
  retry_delay:
    description: Seconds to wait between attempts.
    type: float
    default: 1.0
  window:
    description:
      - Off-peak window C(HH:MM-HH:MM) in O(timezone); may cross midnight. Outside it the module fails (also in
        check mode) with the time the next window opens, unless O(force_window). Checked again before each table.
      - Not set means no window check.
    type: str
  timezone:
    description: IANA time zone of O(window), for example C(Europe/Berlin).
    type: str
    default: UTC
  force_window:
    description: Run even outside O(window).
    type: bool
    default: false
'''
