# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of module_utils/memcache/daemon_options.py: daemon_memcached_option read as the plugin reads it,
written as the role writes it."""

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import daemon_options as m


def test_daemon_option():
    assert m.daemon_option(11211, '127.0.0.1', False) == '-p11211 -l 127.0.0.1'
    assert m.daemon_option(33211, '127.0.0.1', True, '-c 512') == '-p33211 -l 127.0.0.1 -u root -c 512'
    parsed = m.parse_daemon_option('-p33211 -l 127.0.0.1 -u root -c 512')
    assert parsed == {'p': '33211', 'l': '127.0.0.1', 'u': 'root', 'c': '512'}
    assert m.daemon_option_has_user('-p1 -u root')
    assert not m.daemon_option_has_user('-p1 -l 127.0.0.1')


@pytest.mark.parametrize('address,loop', [('127.0.0.1', True), ('127.0.0.2', True), ('localhost', True),
                                          ('::1', True), ('0.0.0.0', False), ('10.0.0.5', False)])
def test_is_loopback(address, loop):
    assert m.is_loopback(address) is loop


# ---------------------------------------------------------------- the plugin's option parser
# Read as daemon_memcached_make_option() + getopt() in MySQL's plugin/innodb_memcached/daemon_memcached/daemon/memcached.c.
@pytest.mark.parametrize('text,options,operands,errors', [
    ('-vl 0.0.0.0', [('v', None), ('l', '0.0.0.0')], [], []),           # clustered flag, then -l with the next word
    ('-l0.0.0.0', [('l', '0.0.0.0')], [], []),                           # argument attached
    ('-vl0.0.0.0', [('v', None), ('l', '0.0.0.0')], [], []),
    ('-Mvc512', [('M', None), ('v', None), ('c', '512')], [], []),      # the argument ends the cluster
    ('-l -p', [('l', '-p')], [], []),                                    # the next word is the argument, dash or not
    ('  -c   512  ', [('c', '512')], [], []),                           # runs of spaces are one separator
    ('stray -l 0.0.0.0', [('l', '0.0.0.0')], ['stray'], []),             # glibc getopt skips operands and goes on
    ('-- -l 0.0.0.0', [], ['-l', '0.0.0.0'], []),                         # '--' ends the options
    ('- -c 1', [('c', '1')], ['-'], []),
    ('-c', [], [], ["-c needs an argument (in '-c')"]),
    ('-oX', [], [], ["-o is not an option of the plugin's memcached (in '-oX')", "-X needs an argument (in '-oX')"]),
    ('-c\t512', [('c', '\t512')], [], []),                               # only spaces separate words
])
def test_getopt_daemon_option(text, options, operands, errors):
    parsed = m.getopt_daemon_option(text)
    assert (parsed.options, parsed.operands, parsed.errors) == (options, operands, errors)


@pytest.mark.parametrize('text,beyond', [
    ('-p11211 -l 127.0.0.1', []),
    ('-p11211 -l 127.0.0.1 -vl 0.0.0.0', ['0.0.0.0']),                   # the last -l wins in this daemon
    ('-p11211 -l 0.0.0.0 -l 127.0.0.1', []),
    ('-l0.0.0.0', ['0.0.0.0']),
    ('-p11211', ['all addresses']),
    ('-l 127.0.0.1,10.0.0.5', ['10.0.0.5']),
    ('-l 127.0.0.1:11211;[::1]:11211', []),
    ('-l 127.evil.example', ['127.evil.example']),
])
def test_beyond_loopback(text, beyond):
    assert m.beyond_loopback(text) == beyond


@pytest.mark.parametrize('extra,found', [
    ('-c 512 -t 4 -B ascii -v', None),
    ('-vl 0.0.0.0', 'must not set -p, -l or -u'),
    ('-l0.0.0.0', 'must not set -p, -l or -u'),
    ('-Mu mysql', 'found -u'),
    ('-vp11212', 'found -p'),
    ('-vh', '-h prints the help and calls exit()'),
    ('-d', '-d daemonizes'),
    ('-X /tmp/evil.so', '-X loads an extension library'),
    ('-E /tmp/engine.so', '-E loads another engine library'),
    ('stray', "'stray' is not an option"),
    ('-- -c 1', "'-c', '1' are not options"),
    ('-c', '-c needs an argument'),
])
def test_extra_option_problems(extra, found):
    problems = m.extra_option_problems(extra)
    if found is None:
        assert problems == []
    else:
        assert any(found in p for p in problems), problems
