# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every guarded-change module (drop_tables, convert_tables) shares: its argument spec
(module_argument_spec, MODULE_RANGES checked by guarded_input.range_problems), the window gate from its options
(module_window_gate) and the run of its change with every failure turned into the module's failure
(run_for_module)."""

from __future__ import annotations

import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils.connection import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded_input import GuardedError, window_gate

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None


def module_window_gate(module, nothing, applies=True):
    """window_gate() for a module from its window / timezone / force_window options: fails the module with
    the refusal (and the nothing-done result), warns when forced. Returns the window status (or None)."""
    p = module.params
    st, refusal, warning = window_gate(p['window'], p['timezone'], p['force_window'], applies=applies)
    if refusal:
        module.fail_json(msg=refusal, window=st, **nothing)
    if warning:
        module.warn(warning)
    return st


# Ranges of the options every guarded-change module takes (module_argument_spec), checked by range_problems.
MODULE_RANGES = dict(lock_wait_timeout=(1, 3600), retries=(0, 10), retry_delay=(0, 300), restore_timeout=(1, 3600))


def module_argument_spec(login_spec, change_class, **own):
    """The argument spec of a guarded-change module: login_spec (connection.login_argument_spec()), the
    options every guarded change takes (the state directory defaulting to change_class's own) and the
    module's own options."""
    spec = dict(login_spec)
    spec.update(
        tables=dict(type='list', elements='str', required=True),
        lock_wait_timeout=dict(type='int', default=2),
        retries=dict(type='int', default=3),
        retry_delay=dict(type='float', default=1.0),
        window=dict(type='str'),
        timezone=dict(type='str', default='UTC'),
        force_window=dict(type='bool', default=False),
        follow=dict(type='bool', default=False),
        state_dir=dict(type='path', default=change_class.default_state_dir),
        restore_timeout=dict(type='int', default=60),
    )
    spec.update(own)
    return spec


def run_for_module(module, change_class, window=None):
    """Run a guarded change (the drop or a conversion) for its module: change_class built from the module's
    params and check mode, with window (the status of the module's window gate). Every failure fails the
    module with the change's report (what was done so far), no traceback reaches the user, and the
    connection is closed in all cases. Returns (the change, its report)."""
    change = change_class(module.params, check_mode=module.check_mode, warn=module.warn)
    change.window = window
    try:
        change.run()
    except GuardedError as e:  # the guard rails' refusals, and the clients' own errors
        module.fail_json(msg=str(e), **change.report())
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='server error: %s' % error_text(e), **change.report())
    except Exception as e:  # pylint: disable=broad-except  # pragma: no cover - keep the report, trace at -vvv
        module.debug(traceback.format_exc())
        module.fail_json(msg='unexpected error (%s): %s' % (type(e).__name__, e), **change.report())
    finally:
        if change.conn is not None:
            try:
                change.conn.close()
            except Exception:  # pylint: disable=broad-except
                pass
    return change, change.report()
