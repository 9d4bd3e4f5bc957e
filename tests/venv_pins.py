# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The versions the project tests with: the pins (``name==version``) of requirements/venv.txt.

One reader for the unit test of the execution environment definition (tests/unit/awx) and the integration
test of the built image (tests/integration/local/awx/test_awx_ee.py), which both compare against these pins.
"""
from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s#]+)")


def venv_pins(path=os.path.join(ROOT, "requirements", "venv.txt")):
    """{lower-cased distribution name: pinned version} of each ``name==version`` line."""
    pins = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = PIN.match(line)
            if match:
                pins[match.group(1).lower()] = match.group(2)
    return pins
