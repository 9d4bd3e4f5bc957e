# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fakes the restart modules' unit tests share (test_service_restart.py, test_command_restart.py): a clock that
sleeping moves on, and an AnsibleModule whose exit_json / fail_json keep the result and stop the run."""

from __future__ import annotations

import pytest


class Clock(object):
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Stop(Exception):
    pass


class FakeModule(object):
    """params, check_mode, the commands run (run_command() is the test's own), and the result."""

    def __init__(self, params, check_mode=False):
        self.params = dict(timeout=30, error_log=None, dropins=None, login_user=None, login_password=None,
                           login_host='127.0.0.1', login_port=1, login_unix_socket=None, config_file='/nonexistent',
                           connect_timeout=1)
        self.params.update(params)
        self.check_mode = check_mode
        self.commands = []
        self.result = None

    def exit_json(self, **kw):
        self.result = dict(kw, failed=False)
        raise Stop()

    def fail_json(self, **kw):
        self.result = dict(kw, failed=True)
        raise Stop()


def run(run_module, module):
    """The result of run_module(module)."""
    with pytest.raises(Stop):
        run_module(module)
    return module.result
