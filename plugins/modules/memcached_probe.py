#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: memcached_probe
short_description: Probe a memcache endpoint such as the InnoDB memcached plugin
version_added: 1.0.0
description:
  - Speaks the memcache text protocol to O(host):O(port) with a timeout on every step.
  - Asks for the server version, optionally its C(stats), fetches keys with C(get) (or C(gets)),
    optionally through a container of the InnoDB memcached plugin (C(@@container.key)), and
    compares the values with expected ones.
  - Optionally checks that writes are refused, as they are with the default policy of the
    P(dbfleet.innodb.memcached#role) role (set and delete C(disabled)). The plugin answers
    C(STORED) even when the set policy is C(disabled) and drops the write, so the check writes
    a probe key and reads it back. A probe key that was really stored is deleted again.
  - It only talks to the memcache port. The login options are accepted (and ignored) so the module
    can run under the collection's C(group/dbfleet.innodb.innodb) module defaults.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Reads run in check mode too; the write check (O(check_write_refused)) is skipped in check mode.
      The module reports C(changed) when the write check stored a probe row (and deleted it again).
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff.
  platform:
    platforms: posix
    support: full
    description: Needs only a TCP connection to the memcache port.
options:
  host:
    description:
      - Address of the memcache server.
    type: str
    default: 127.0.0.1
  port:
    description:
      - TCP port of the memcache server (1-65535).
    type: int
    default: 11211
  timeout:
    description:
      - Seconds to wait for the connection and for each answer.
    type: float
    default: 3.0
  wait:
    description:
      - Seconds to keep retrying the connection until the server answers C(version), for a
        server that has just started.
    type: float
    default: 0
  container:
    description:
      - Name of an InnoDB memcached container; keys are then asked as C(@@container<delimiter>key).
      - When not set, keys are sent as given (use C(@@name.key) yourself, or the default container).
    type: str
  delimiter:
    description:
      - The plugin's C(table_map_delimiter) between the container name and the key.
    type: str
    default: '.'
  keys:
    description:
      - Keys to fetch without an expected value; their values are returned.
    type: list
    elements: str
    default: []
  expected:
    description:
      - Keys and the values they should have. A value of V(null) means the key must be absent.
      - Values are compared as text (multi-column containers return the columns joined by the
        plugin's separator, C(|) by default).
    type: dict
    default: {}
  use_gets:
    description:
      - Fetch with C(gets) and return the CAS value of each key.
    type: bool
    default: false
  stats:
    description:
      - Return the server's C(stats).
    type: bool
    default: false
  check_write_refused:
    description:
      - Write a unique probe key with C(set), read it back, and fail when it was stored.
      - A stored probe key is deleted again; the result says if that did not work.
      - Skipped in check mode.
    type: bool
    default: false
  fail_on_mismatch:
    description:
      - Fail when an expected value differs or when the write check finds writes accepted.
      - With V(false), mismatches are only reported.
    type: bool
    default: true
notes:
  - The InnoDB memcached plugin has no authentication; see the P(dbfleet.innodb.memcached#role) role
    for why it should only listen on loopback or a firewalled private network.
seealso:
  - module: dbfleet.innodb.memcached_config
  - module: dbfleet.innodb.memcached_plugin
'''

EXAMPLES = r'''
- name: Check that the token container serves a known row and refuses writes
  dbfleet.innodb.memcached_probe:
    port: 11211
    container: token
    expected:
      '0123456789abcdef': 'the-token-value'
    check_write_refused: true

- name: Version and stats only
  dbfleet.innodb.memcached_probe:
    port: 11211
    stats: true
  register: memcache

- name: Wait for a freshly installed plugin to answer, then fetch raw keys
  dbfleet.innodb.memcached_probe:
    port: 11211
    wait: 10
    keys:
      - '@@aaa.AA'
'''

RETURN = r'''
version:
  description: What the server answered to C(version).
  returned: always
  type: str
  sample: 8.0.33
stats:
  description: The server's C(stats) as strings.
  returned: when O(stats=true)
  type: dict
  sample: {cmd_get: '6', get_hits: '4', get_misses: '2', curr_connections: '2'}
lookups:
  description: Per key asked (as sent on the wire), what came back.
  returned: always
  type: dict
  sample:
    '@@token.0123456789abcdef': {found: true, value: the-token-value, flags: 0, cas: null,
                                 expected: the-token-value, match: true}
mismatches:
  description: The keys whose value differs from O(expected).
  returned: always
  type: list
  elements: dict
  sample: [{key: '@@token.k1', expected: v1, actual: null}]
write_check:
  description:
    - Outcome of O(check_write_refused). C(refused) is V(true) when the probe key could not be
      read back, C(answer) is what the server said to the C(set) (the plugin says C(STORED) even
      when it drops the write), C(cleaned_up) says whether a stored probe key was deleted again.
  returned: when O(check_write_refused=true)
  type: dict
  sample: {key: '@@token.dbfleet-probe-5d41402a', answer: STORED, refused: true, cleaned_up: null, skipped: false}
'''

import uuid

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.client import (
    MemcacheClient, MemcacheError, check_key, container_key, wait_for_server)


def _text(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return str(value)


def validate(module):
    p = module.params
    if not 1 <= p['port'] <= 65535:
        module.fail_json(msg='port must be between 1 and 65535, got %s' % p['port'])
    if p['timeout'] <= 0:
        module.fail_json(msg='timeout must be greater than 0, got %s' % p['timeout'])
    if p['container'] is not None:
        try:
            check_key('@@%s%s' % (p['container'], p['delimiter']))
        except ValueError as e:
            module.fail_json(msg='container: %s' % e)
    wire = {}
    for key in list(p['keys']) + list(p['expected']):
        full = container_key(p['container'], str(key), p['delimiter'])
        try:
            check_key(full)
        except ValueError as e:
            module.fail_json(msg='key %r: %s' % (key, e))
        wire[str(key)] = full
    return wire


def write_check(client, module):
    p = module.params
    result = dict(skipped=False, key=None, answer=None, refused=None, cleaned_up=None)
    if module.check_mode:
        result['skipped'] = True
        return result
    probe = 'dbfleet-probe-%s' % uuid.uuid4().hex[:12]
    key = container_key(p['container'], probe, p['delimiter'])
    value = uuid.uuid4().hex
    result['key'] = key
    result['answer'] = client.set(key, value)
    back = client.get(key).get(key)
    stored = back is not None and _text(back['value']) == value
    result['refused'] = not stored
    if stored:
        answer = client.delete(key)
        result['cleaned_up'] = answer == 'DELETED' and key not in client.get(key)
    return result


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        host=dict(type='str', default='127.0.0.1'),
        port=dict(type='int', default=11211),
        timeout=dict(type='float', default=3.0),
        wait=dict(type='float', default=0),
        container=dict(type='str'),
        delimiter=dict(type='str', default='.'),
        keys=dict(type='list', elements='str', default=[], no_log=False),
        expected=dict(type='dict', default={}),
        use_gets=dict(type='bool', default=False),
        stats=dict(type='bool', default=False),
        check_write_refused=dict(type='bool', default=False),
        fail_on_mismatch=dict(type='bool', default=True),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    wire = validate(module)
    result = dict(changed=False, version=None, lookups={}, mismatches=[])

    version, error = wait_for_server(p['host'], p['port'], p['timeout'], p['wait'])
    if version is None:
        module.fail_json(msg='memcache server at %s:%s does not answer: %s' % (p['host'], p['port'], error),
                         **result)
    result['version'] = version

    client = MemcacheClient(p['host'], p['port'], p['timeout'])
    try:
        with client:
            if p['stats']:
                result['stats'] = client.stats()
            if wire:
                fetch = client.gets if p['use_gets'] else client.get
                # One request per key: the plugin honours @@container only on the first key of a multi-get.
                for name, key in wire.items():
                    hit = fetch([key]).get(key)
                    entry = dict(found=hit is not None,
                                 value=_text(hit['value']) if hit else None,
                                 flags=hit['flags'] if hit else None,
                                 cas=hit['cas'] if hit else None)
                    if name in p['expected']:
                        want = _text(p['expected'][name])
                        entry['expected'] = want
                        entry['match'] = entry['value'] == want
                        if not entry['match']:
                            result['mismatches'].append(dict(key=key, expected=want, actual=entry['value']))
                    result['lookups'][key] = entry
            if p['check_write_refused']:
                result['write_check'] = write_check(client, module)
    except MemcacheError as e:
        module.fail_json(msg='memcache probe of %s:%s failed: %s' % (p['host'], p['port'], e), **result)

    problems = []
    if result['mismatches']:
        problems.append('%d key(s) differ from the expected values: %s' % (
            len(result['mismatches']),
            ', '.join('%s (expected %r, got %r)' % (m['key'], m['expected'], m['actual'])
                      for m in result['mismatches'])))
    check = result.get('write_check')
    # A probe row that was stored (and deleted again) is a change to the table.
    result['changed'] = bool(check and check['refused'] is False)
    if check and check['refused'] is False:
        text = 'a write was accepted: probe key %s was stored' % check['key']
        if check['cleaned_up']:
            text += ' (and deleted again)'
        else:
            text += ' and could NOT be deleted again: remove it from the table'
        problems.append(text)
    if problems and p['fail_on_mismatch']:
        module.fail_json(msg='; '.join(problems), **result)
    if problems:
        module.warn('; '.join(problems))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
