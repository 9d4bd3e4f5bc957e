# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/block_devices.py: mountinfo parsed, the mount that holds a path, device names."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import block_devices

MOUNTINFO = '\n'.join([
    '22 27 0:21 / /proc rw,relatime - proc proc rw',
    '27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw',
    '40 27 259:3 / /var/lib/mysql rw,noatime shared:20 master:3 - xfs /dev/nvme0n1p3 rw',
    '41 27 8:1 / /var/lib/mysql\\040data rw - ext4 /dev/sda1 rw',
    '42 40 0:45 / /var/lib/mysql/tmp rw - tmpfs tmpfs rw',
    'garbage line',
    '43 27 8:17 / /srv rw - ext4 /dev/sdb1 rw',
    '44 27 8:33 / /srv rw - ext4 /dev/sdc1 rw',
])


def test_parse_mountinfo_fields_optional_fields_and_escapes():
    mounts = block_devices.parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 7  # the garbage line is skipped
    data = [m for m in mounts if m['mount_id'] == '40'][0]
    assert (data['major'], data['minor'], data['fstype'], data['source']) == (259, 3, 'xfs', '/dev/nvme0n1p3')
    spaced = [m for m in mounts if m['mount_id'] == '41'][0]
    assert spaced['mount_point'] == '/var/lib/mysql data'


@pytest.mark.parametrize('path, mount_id', [
    ('/var/lib/mysql', '40'),
    ('/var/lib/mysql/', '40'),
    ('/var/lib/mysql/ibdata1', '40'),
    ('/var/lib/mysql2', '27'),          # a prefix that is not a path component
    ('/var/lib/mysql data/x', '41'),
    ('/var/lib/mysql/tmp/x', '42'),     # the longest mount point wins
    ('/var/lib', '27'),
    ('/', '27'),
    ('/srv/a', '44'),                   # overmounted: the later mount wins
])
def test_find_mount_longest_prefix(path, mount_id):
    assert block_devices.find_mount(block_devices.parse_mountinfo(MOUNTINFO), path)['mount_id'] == mount_id


def test_find_mount_none_without_root():
    assert block_devices.find_mount(block_devices.parse_mountinfo('40 27 259:3 / /data rw - xfs /dev/x rw'), '/var') is None


@pytest.mark.parametrize('name, ok', [
    ('sda', True), ('nvme0n1p2', True), ('dm-3', True), ('md0', True), ('259:2', True),
    ('cciss!c0d0', True), ('../etc', False), ('sda/..', False), ('', False), ('a b', False),
])
def test_valid_device_name(name, ok):
    assert block_devices.valid_device_name(name) is ok
