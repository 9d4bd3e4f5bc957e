# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every guarded-change module (drop_tables, convert_tables) shares: its options with their defaults and
ranges (GUARDED_OPTIONS, read by module_argument_spec, module_ranges and the playbooks' inputs), the window gate
from its options (module_window_gate) and the run of its change with every failure turned into the module's
failure (run_for_module)."""

from __future__ import annotations

import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, window_gate
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges, option_spec

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


# The options every guarded-change module takes, with their defaults and ranges: the one definition the modules'
# argument spec (module_argument_spec), their range check (MODULE_RANGES, option_specs.range_problems) and the
# playbooks' inputs (playbook_inputs.py) read. state_dir is added per change class (its own default).
GUARDED_OPTIONS = dict(
    tables=dict(type='list', elements='str', required=True),
    lock_wait_timeout=dict(type='int', default=2, range=(1, 3600)),
    retries=dict(type='int', default=3, range=(0, 10)),
    retry_delay=dict(type='float', default=1.0, range=(0, 300)),
    window=dict(type='str'),
    timezone=dict(type='str', default='UTC'),
    force_window=dict(type='bool', default=False),
    follow=dict(type='bool', default=False),
    restore_timeout=dict(type='int', default=60, range=(1, 3600)),
)

# Ranges of the options every guarded-change module takes, checked by range_problems.
MODULE_RANGES = option_ranges(GUARDED_OPTIONS)


def module_argument_spec(login_spec, change_class, own=None):
    """The argument spec of a guarded-change module: login_spec (connection.login_argument_spec()), the
    options every guarded change takes (GUARDED_OPTIONS; the state directory defaulting to change_class's own)
    and the module's own options (own, in the same form: a spec may hold its range)."""
    spec = dict(login_spec)
    spec.update(option_spec(GUARDED_OPTIONS))
    spec.update(state_dir=dict(type='path', default=change_class.default_state_dir))
    spec.update(option_spec(own or {}))
    return spec


def module_ranges(own=None):
    """The ranges a guarded-change module checks: MODULE_RANGES and those of its own options."""
    return dict(MODULE_RANGES, **option_ranges(own or {}))


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
