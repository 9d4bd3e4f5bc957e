# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.verify_fleet: the fleet audit, run on the controller only.

No module goes to any host. For each host of `hosts`, the login comes from that host's own inventory
variables through the collection's one login path (plugin_utils/login.py, login_args_from_host),
and only the variables the audit needs are templated (the login ones, ansible_host, the roles' inputs and
the settings variable). The audits run in a pool of threads sized by what the controller can hold, the hosts
dealt out over one worker process per usable CPU (plugins/module_utils/audit/verify_fleet.py, fleet_pool.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_args_from_host
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import startup_cache
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_capacity
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_pool
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as report_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as report_files
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import login_variables
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.role_variables import roles_variables

ARGUMENT_SPEC = dict(
    hosts=dict(type='list', elements='str', required=True),
    desired_from=dict(type='list', elements='str', default=[]),
    role_hosts=dict(type='dict', default={}),
    settings_variable=dict(type='str', default='verify_extra_settings'),
    pool=dict(type='int', default=fleet_capacity.DEFAULT_POOL),
    workers=dict(type='int'),
    timeout=dict(type='int', default=verify_fleet.DEFAULT_TIMEOUT),
    deadline=dict(type='int', default=verify_fleet.DEFAULT_DEADLINE),
    controller_ca_cert=dict(type='path'),
    controller_client_cert=dict(type='path'),
    controller_client_key=dict(type='path'),
    report_dir=dict(type='path'),
    report_mode=dict(type='raw', default='0600'),
    results_from=dict(type='str'),
    target_version=dict(type='str'),
    startup_cache=dict(type='bool', default=False),
    startup_cache_max_age=dict(type='int', default=startup_cache.DEFAULT_STARTUP_CACHE_MAX_AGE),
)
# The cacheable fact playbooks/verify.yml sets in the per-host mode (verify_startup_cache): what the host's
# verify run read of what a restart brings, with read_at.
STARTUP_FACT = 'verify_startup_state'
# Keys of a host's result on its way back from the audit (the inputs' unknown variables, the password to
# mask messages with); taken off before anything else sees the result.
_UNKNOWN = '_verify_fleet_unknown'
_SECRET = '_verify_fleet_login_password'


class _HostTask(object):
    """What login_variables() needs to know of a task: no delegation (each host logs in to its own server)."""
    delegate_to = None


class ActionModule(ActionBase):
    """Audits every host of `hosts` from the controller over SQL."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def _check_args(self):
        validation = ArgumentSpecValidator(ARGUMENT_SPEC).validate(dict(self._task.args))
        if validation.error_messages:
            raise AnsibleActionFail('verify_fleet: %s' % '; '.join(validation.error_messages))
        args = validation.validated_parameters
        limits = verify_fleet.check_limits(args['pool'], args['timeout'], args['deadline'])
        if limits:
            raise AnsibleActionFail('verify_fleet: %s' % '; '.join(limits))
        args['pool'], error = fleet_capacity.pool_size(args['pool'], len(args['hosts']))
        if error:
            raise AnsibleActionFail('verify_fleet: %s' % error)
        args['workers'], error = fleet_capacity.worker_count(args['workers'], len(args['hosts']))
        if error:
            raise AnsibleActionFail('verify_fleet: %s' % error)
        try:
            args['desired_from'] = desired.check_roles(args['desired_from'])
        except ValueError as e:
            raise AnsibleActionFail('verify_fleet: %s' % e)
        bad = sorted(str(k) for k in args['role_hosts'] if k not in desired.RECORDS)
        if bad:
            raise AnsibleActionFail('verify_fleet: role_hosts names roles %s; the roles are %s'
                                    % (', '.join(bad), ', '.join(desired.ROLES)))
        for role, names in args['role_hosts'].items():
            if not isinstance(names, list):
                raise AnsibleActionFail('verify_fleet: role_hosts.%s must be a list of host names' % role)
        try:
            args['report_mode'] = report_files.parse_mode(args['report_mode'])
        except report_utils.ReportError as e:
            raise AnsibleActionFail('verify_fleet: %s' % e)
        if not 1 <= args['startup_cache_max_age'] <= 366 * 86400:
            raise AnsibleActionFail('verify_fleet: startup_cache_max_age must be 1-%d seconds; got %r'
                                    % (366 * 86400, args['startup_cache_max_age']))
        if args['results_from'] is not None and not args['report_dir']:
            raise AnsibleActionFail('verify_fleet: results_from needs report_dir (it only writes the report)')
        try:
            args['target'] = storage_engines.parse_target_spec(args['target_version'])
        except ValueError as e:
            raise AnsibleActionFail('verify_fleet: %s' % e)
        return args

    def _host_job(self, name, raw, args):
        """(job, None) or (None, error result): the templated inputs of one host's audit."""
        templar = self._templar.copy_with_new_env(available_variables=raw)
        template = templar.template
        host_vars, _templar = login_variables(_HostTask(), raw, templar)
        params = login_args_from_host({}, host_vars, template)
        target_vars = dict((k, template(host_vars[k])) for k in verify_fleet.TARGET_VARIABLES if k in host_vars)
        try:
            params, notes = verify_fleet.controller_login(params, target_vars, name)
        except ValueError as e:
            return None, dict(failed=True, msg=str(e))
        for option in verify_fleet.HOST_FILE_OPTIONS:
            if args['controller_%s' % option]:
                params[option] = args['controller_%s' % option]
        roles = [r for r in args['desired_from']
                 if r not in args['role_hosts'] or name in args['role_hosts'][r]]
        # As in the per-host mode (plugin_utils/role_variables.py): the inputs templated, a misspelt <role>_*
        # variable named (never templated), so it gets the same warning in both modes.
        variables = roles_variables(roles, host_vars, template)
        inputs, unknown = {}, []
        for role in roles:
            role_inputs, role_unknown = desired.role_inputs(role, variables)
            inputs.update(role_inputs)
            unknown.extend(role_unknown)
        extra = template(host_vars.get(args['settings_variable'])) or {}
        if not isinstance(extra, dict):
            return None, dict(failed=True, msg='%s must be a dict of variable name -> desired value, got %s'
                              % (args['settings_variable'], type(extra).__name__))
        cache = raw.get(STARTUP_FACT) if args['startup_cache'] else None
        if cache is not None:
            cache = template(cache)
        return dict(params=params, notes=notes, roles=roles, inputs=inputs, extra=dict(extra), unknown=unknown,
                    startup_cache=cache), None

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        result = super().run(tmp, task_vars)
        del tmp
        args = self._check_args()
        hostvars = task_vars.get('hostvars')
        if hostvars is None:
            raise AnsibleActionFail('verify_fleet: no hostvars in this play')

        if args['results_from'] is not None:
            # The per-host mode: every host audited itself; only the report is made here, in the same place.
            results = dict((name, self._registered(name, hostvars, args['results_from'])) for name in args['hosts'])
            return self._report(result, results, args)

        timeout = args['timeout']
        hosts = dict((name, name) for name in args['hosts'])
        timings = {}

        def prepare(names):
            """({name: job}, {name: error result}) for these hosts: their inputs templated, one host at a time."""
            jobs, errors = {}, {}
            for name in names:
                if name not in hostvars:
                    errors[name] = dict(failed=True, msg='%s is not in the inventory' % name)
                    continue
                try:
                    job, error = self._host_job(name, hostvars.raw_get(name), args)
                except Exception as e:  # pylint: disable=broad-except  # a variable that fails to template
                    job, error = None, dict(failed=True, msg='cannot read the host variables: %s' % e)
                if error:
                    errors[name] = error
                else:
                    jobs[name] = job
            return jobs, errors

        def worker(job):
            roles, notes = verify_fleet.controller_roles(job['roles'], job['inputs'])
            outcome = verify_fleet.audit_host(job['params'], job['extra'], roles, job['inputs'], job['notes'] + notes,
                                              timeout, upgrade_target=args['target'], deadline=args['deadline'],
                                              startup_cache=job['startup_cache'],
                                              startup_cache_max_age=args['startup_cache_max_age'])
            # Taken off again as each result comes back (below), never in the output.
            outcome[_UNKNOWN] = job['unknown']
            outcome[_SECRET] = job['params'].get('login_password')
            return outcome

        started = time.monotonic()
        if args['workers'] > 1:
            # Each worker process reads its own hosts' inputs (one core each), then audits them.
            results = fleet_pool.run_workers(hosts, worker, args['pool'], args['workers'], prepare=prepare)
        else:
            jobs, early = prepare(hosts)
            timings['inputs'] = round(time.monotonic() - started, 3)
            started = time.monotonic()
            results = fleet_pool.run_workers(jobs, worker, args['pool'], 1)
            results = dict((name, results[name] if name in results else early[name]) for name in args['hosts'])
        timings['audit'] = round(time.monotonic() - started, 3)
        warnings, secrets = [], set()
        for name, outcome in results.items():
            unknown = outcome.pop(_UNKNOWN, None) or []
            secret = outcome.pop(_SECRET, None)
            if secret:
                secrets.add(str(secret))
            if unknown and not outcome.get('failed'):
                outcome['unknown_variables'] = sorted(set(outcome.get('unknown_variables') or []) | set(unknown))
            warnings.extend((name, '%s: %s is not a variable of its role (misspelt?); it is ignored' % (name, var))
                            for var in unknown)
        if warnings:
            result['warnings'] = list(result.get('warnings') or []) + [text for _name, text in sorted(warnings, key=lambda w: w[0])]
        # No result carries a login; should a server's message ever quote a password, it is masked there
        # (as a word of its own: a short password such as ON does not blank values).
        results = masking.mask_login_secrets(results, secrets)
        result.update(changed=False, summary=verify_fleet.summarize(results), pool=args['pool'], workers=args['workers'],
                      seconds=timings)
        if not args['report_dir']:
            result['hosts'] = results
            return result
        # Thousands of results: the report files are written here, not templated through the play.
        started = time.monotonic()
        self._report(result, results, args)
        timings['report'] = round(time.monotonic() - started, 3)
        return result

    def _registered(self, name, hostvars, variable):
        """The verify result a host registered in the per-host mode (None when it has none)."""
        if name not in hostvars:
            return dict(failed=True, msg='%s is not in the inventory' % name)
        raw = hostvars.raw_get(name)
        if variable not in raw:
            return None
        # Read as registered, not rendered again: a module's result is data, never trusted as a template, and the
        # rescue's set_fact stored its rendered value. Rendering walked every host's whole result (server facts,
        # desired state, evidence) where the report copies only the parts it shows (verify_report._read_outcome).
        outcome = raw[variable]
        if not isinstance(outcome, Mapping):
            return dict(failed=True, msg='cannot read the audit result: %s is not a verify result' % variable)
        return outcome

    def _report(self, result, results, args):
        """Build the report (secrets masked by variable), write its files as one set, return the outline."""
        report = report_utils.verify_report(results)
        result.update(changed=True, summary=dict((k, report['summary'][k]) for k in
                                                 ('hosts', 'hosts_ok', 'hosts_startup_unknown', 'hosts_drift',
                                                  'hosts_error')),
                      report=report_files.report_outline(report),
                      report_files=[os.path.join(args['report_dir'], name) for name in report_files.REPORT_FILES])
        if not self._task.check_mode:
            report_files.write_report_set(report, args['report_dir'], args['report_mode'])
        unknown = report_utils.upgrade_warnings(report['hosts'])
        if unknown:
            result['warnings'] = list(result.get('warnings') or []) + unknown
        return result
