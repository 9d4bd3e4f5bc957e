# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of the flush_neighbors role: innodb_flush_neighbors (and, with flush_neighbors_io_profile, the I/O
capacity) for the storage under the datadir, detected (host/storage.py) or given (flush_neighbors_storage_class).

flush_neighbors() is the function of the role's record in module_utils/roles/desired.py's registry, with the contract
of every role function (module_utils/roles/states.py); its steps, each a function of its own: the inputs
(read_inputs), the storage class used (storage_decision), the settings for it (class_settings), the order the server
takes them at runtime (runtime_order). Loaded only when this role's desired state is worked out. Unit tests:
test_flush_neighbors.py, test_desired.py.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input

STORAGE_CLASSES = ('ssd', 'hdd', 'mixed')
# Built-in maps (merged under the user's): mixed storage puts some pages on an HDD, where neighbor
# flushing saves seeks, and costs SSDs only extra writes, so it is treated like HDD.
FLUSH_NEIGHBORS_MAP = dict(ssd=0, hdd=1, mixed=1)
IO_CAPACITY = dict(ssd=2000, hdd=200, mixed=200)
IO_CAPACITY_MAX = dict(ssd=4000, hdd=2000, mixed=2000)


def _class_map(check, name, builtin, value_check):
    user = check.mapping(name, STORAGE_CLASSES)
    merged = dict(builtin)
    for key, value in user.items():
        merged[key] = value_check('%s.%s' % (name, key), value) if value is not None else None
    return merged


def read_inputs(check, facts):
    """Step 1 of flush_neighbors(): the role's inputs, bad ones to check: dict(override, min_confidence, persist,
    io_profile, flush_neighbors, io_capacity, io_capacity_max), the last three maps by storage class (the built-in
    ones under the user's, each value in the version table's range for this server). A capacity above its maximum,
    and SET PERSIST where the server has none, are refused."""
    override = check.choice('flush_neighbors_storage_class', ('ssd', 'hdd'), allow_none=True)
    check.choice('flush_neighbors_unknown_action', ('leave', 'fail'))
    min_confidence = check.choice('flush_neighbors_min_confidence', ('low', 'high'))
    check.boolean('flush_neighbors_probe', allow_none=False)
    persist = check.choice('flush_neighbors_persist', ('dropin', 'set_persist', 'both'))
    io_profile = check.boolean('flush_neighbors_io_profile', allow_none=False)
    where = 'on ' + role_input.server_text(facts)
    fn_low, fn_high = role_input.variable_range('innodb_flush_neighbors', facts)
    fn_map = _class_map(check, 'flush_neighbors_map', FLUSH_NEIGHBORS_MAP,
                        lambda label, v: check.integer(None, fn_low, fn_high, value=v, label=label, where=where))
    cap_low = role_input.variable_range('innodb_io_capacity', facts)[0]
    max_low = role_input.variable_range('innodb_io_capacity_max', facts)[0]
    caps = _class_map(check, 'flush_neighbors_io_capacity', IO_CAPACITY,
                      lambda label, v: check.integer(None, cap_low, value=v, label=label, where=where))
    cap_max = _class_map(check, 'flush_neighbors_io_capacity_max', IO_CAPACITY_MAX,
                         lambda label, v: check.integer(None, max_low, value=v, label=label, where=where))
    if not check.errors:
        for klass in STORAGE_CLASSES:
            if caps[klass] is not None and cap_max[klass] is not None and caps[klass] > cap_max[klass]:
                check.error('flush_neighbors_io_capacity.%s (%d) may not exceed flush_neighbors_io_capacity_max.%s '
                            '(%d): innodb_io_capacity may not exceed innodb_io_capacity_max'
                            % (klass, caps[klass], klass, cap_max[klass]))
    if persist in ('set_persist', 'both') and not (facts.get('capabilities') or {}).get('set_persist'):
        check.error('flush_neighbors_persist=%s needs SET PERSIST, which %s %s does not have (MySQL and Percona '
                    'Server 8.0+ only); use flush_neighbors_persist=dropin for this host'
                    % (persist, facts.get('flavor'), facts.get('version_text')))
    return dict(override=override, min_confidence=min_confidence, persist=persist, io_profile=io_profile,
                flush_neighbors=fn_map, io_capacity=caps, io_capacity_max=cap_max)


def storage_decision(override, min_confidence, detected, datadir):
    """Step 2 of flush_neighbors(): the storage the settings follow (the role's result `storage`): the override when
    given, else what was detected (unknown when its confidence is below min_confidence), where it came from
    (override, sysfs, sysfs+probe, none) and the reasons."""
    det = dict(detected or {})
    det_class = det.get('storage_class') or 'unknown'
    det_conf = det.get('confidence') or 'low'
    confident = min_confidence == 'low' or det_conf == 'high'
    if det_class != 'unknown' and not confident:
        det_used = 'unknown'
    else:
        det_used = det_class
    klass = override if override is not None else det_used
    probe = det.get('probe')
    probe_used = bool(probe) and (probe.get('storage_class') or 'unknown') != 'unknown'
    if override is not None:
        source = 'override'
    elif klass == 'unknown':
        source = 'none'
    else:
        source = 'sysfs+probe' if probe_used else 'sysfs'
    known = klass != 'unknown'
    reasons = []
    if override is not None:
        reasons.append('override flush_neighbors_storage_class=%s wins over the detected %s (%s confidence)'
                       % (override, det_class, det_conf))
    if det_class != 'unknown' and not confident:
        reasons.append('detected %s with low confidence, and flush_neighbors_min_confidence is high' % det_class)
    reasons.extend(det.get('reasons') or [])
    return dict(
        storage_class=klass, source=source,
        confidence='high' if override is not None else (det_conf if known else 'low'),
        detected_class=det_class, detected_confidence=det_conf,
        datadir=datadir, mount=det.get('mount'),
        devices=[d.get('name') if isinstance(d, dict) else d for d in (det.get('devices') or [])],
        reasons=reasons, probe=probe,
    )


def class_settings(klass, inputs):
    """Step 3 of flush_neighbors(): the settings for storage class klass from the maps of inputs (read_inputs()):
    innodb_flush_neighbors, and with io_profile the I/O capacity and its maximum; none for an unknown class or a
    null in a map."""
    settings = {}
    if klass == 'unknown':
        return settings
    if inputs['flush_neighbors'][klass] is not None:
        settings['innodb_flush_neighbors'] = inputs['flush_neighbors'][klass]
    if inputs['io_profile']:
        if inputs['io_capacity'][klass] is not None:
            settings['innodb_io_capacity'] = inputs['io_capacity'][klass]
        if inputs['io_capacity_max'][klass] is not None:
            settings['innodb_io_capacity_max'] = inputs['io_capacity_max'][klass]
    return settings


def runtime_order(settings, running_max):
    """Step 4 of flush_neighbors(): the settings as runtime steps ([{name: value}]) in an order the server takes:
    innodb_io_capacity may never exceed innodb_io_capacity_max, so when the new capacity is above the running maximum
    the maximum is raised first; otherwise the capacity is set first."""
    runtime = []
    if 'innodb_flush_neighbors' in settings:
        runtime.append({'innodb_flush_neighbors': settings['innodb_flush_neighbors']})
    cap = settings.get('innodb_io_capacity')
    try:
        cap_first = cap is None or running_max is None or cap <= int(running_max)
    except (TypeError, ValueError):
        cap_first = True
    order = ['innodb_io_capacity', 'innodb_io_capacity_max']
    if not cap_first:
        order.reverse()
    runtime.extend({n: settings[n]} for n in order if n in settings)
    return runtime


def flush_neighbors(variables, facts, detected):
    """Desired state of the flush_neighbors role.

    facts: server_facts (datadir, capabilities, the variables of its record's server_variables).
    detected: what storage_facts found under the datadir (storage_class, confidence, reasons, mount,
    devices, probe). Raises InputError. Returns a dict: settings, option_file, runtime (a list of
    {name: value} in a safe order), storage (class, source, confidence, evidence), left_alone, notes.
    """
    check = role_input.Checker(variables, desired.INPUTS['flush_neighbors'], facts)
    inputs = read_inputs(check, facts)
    check.done()

    storage = storage_decision(inputs['override'], inputs['min_confidence'], detected, facts.get('datadir'))
    klass, source = storage['storage_class'], storage['source']
    settings = class_settings(klass, inputs)
    runtime = runtime_order(settings, role_input.server_variable(facts, 'innodb_io_capacity_max').get('runtime'))
    notes = []
    fn = settings.get('innodb_flush_neighbors')
    if (facts.get('capabilities') or {}).get('flush_neighbors_ssd_autodetect') and fn:
        notes.append('MariaDB %s skips neighbor flushing for data files on devices it judged non-rotational at '
                     'startup, whatever innodb_flush_neighbors says; the value %s applies only to files it judged '
                     'rotational' % (facts.get('version_text'), fn))
    header = 'Storage under %s: %s (source: %s).' % (facts.get('datadir'), klass, source)
    persist = inputs['persist']
    return option_writer.with_option_file(
        ['Managed by the dbfleet.innodb.flush_neighbors role: local changes are overwritten.', header,
         'Set flush_neighbors_storage_class / flush_neighbors_map in the inventory instead.'],
        [(name, value, 'int') for name, value in sorted(settings.items())],
        settings=settings,
        header=option_writer.CONTROL_RE.sub('?', header),
        runtime=runtime,
        storage=storage,
        left_alone=not settings,
        persist=persist,
        dropin=('leave' if not settings else 'remove' if persist == 'set_persist' else 'write'),
        runtime_persist=persist in ('set_persist', 'both'),
        notes=notes,
    )
