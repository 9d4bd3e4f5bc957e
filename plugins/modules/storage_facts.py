#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: storage_facts
short_description: Tell whether the storage under a path or device is SSD, HDD, mixed or unknown
version_added: 1.0.0
description:
  - Resolves a directory (by default the server's C(datadir)) to its mount and block device, then walks
    partitions to their disk, device-mapper devices (LVM, dm-crypt, multipath) and md RAID arrays to
    every underlying device listed in C(slaves/), and loop devices to the storage of their backing file.
  - For each physical device it reads C(queue/rotational) and the evidence that says whether that flag
    can be trusted - the kind of device (NVMe, virtio, SCSI/SATA, md, dm, loop, zram), vendor and model,
    discard support, the md array's degraded state - and explains its verdict in RV(reasons).
  - The kernel's rotational flag is often wrong. virtio-blk always reports 1, even on SSD-backed storage;
    a degraded md array can report 1 over SSDs; partitions have no flag of their own; hardware RAID
    controllers and hypervisors report whatever they were configured to. Where the flag says nothing,
    the result is V(unknown) (or has low confidence) instead of a guess.
  - With O(probe=true), a short read-only latency probe (random 4 KiB C(O_DIRECT) reads of existing files
    under the path) adds its own verdict and says when it contradicts sysfs.
  - Read-only; never changes anything.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.login
options:
  path:
    description:
      - A directory (or file) whose storage to inspect. Symbolic links are resolved first.
      - When neither O(path) nor O(device) is given, the module asks the server for C(@@datadir), using
        the login options, and inspects that.
      - A path that does not exist, or that has no block device under it (tmpfs, overlay, NFS), gives
        RV(storage_class=unknown) with a reason, not a failure.
    type: path
  device:
    description:
      - A block device to inspect instead of a path. A kernel name (V(nvme0n1p2), V(dm-3), V(md0), V(sda)),
        a C(MAJ:MIN) pair (V(259:2)), or a C(/dev/...) path (V(/dev/mapper/vg-mysql)).
      - A device that does not exist fails the task with a message naming it.
    type: str
  sysfs_root:
    description:
      - Root of the sysfs tree to read. Point it at a recorded copy to inspect another machine's layout.
    type: path
    default: /sys
  proc_root:
    description:
      - Root of the proc tree; C(self/mountinfo) under it is the mount table used to find the path's device.
      - With a recorded tree, a path that does not exist on this host is looked up in the recorded mount table as written.
    type: path
    default: /proc
  probe:
    description:
      - Run the latency probe on the path (not with O(device)). It only reads, with C(O_NOATIME) when
        allowed, and stops after O(probe_max_reads) reads or O(probe_max_seconds) seconds.
      - Where C(O_DIRECT) is not supported, or the path has no block device under it (tmpfs, overlay, NFS),
        the probe does not give a verdict and says why.
    type: bool
    default: false
  probe_max_reads:
    description:
      - Upper bound on the number of 4 KiB reads of the probe (1 to 1000).
    type: int
    default: 200
  probe_max_seconds:
    description:
      - Upper bound on the probe's duration in seconds (0.1 to 5).
    type: float
    default: 2.0
attributes:
  platform:
    platforms: posix
    support: full
    description: Linux hosts (sysfs and C(/proc/self/mountinfo)); other platforms get V(unknown).
notes:
  - The login options are only used when neither O(path) nor O(device) is given; they are accepted always, so
    the module works under C(module_defaults) for the C(group/dbfleet.innodb.innodb) action group.
  - Latency thresholds of the probe - median up to 2 ms is SSD-like, from 4 ms HDD-like, in between no verdict.
    A hypervisor's or controller's cache can make slow storage look fast, so a verdict from the probe alone has
    low confidence; a probe that agrees with weak sysfs evidence raises the confidence to high.
seealso:
  - module: dbfleet.innodb.server_facts
  - module: dbfleet.innodb.verify
'''

EXAMPLES = r'''
- name: What is under the server's datadir (asks the server for @@datadir)
  dbfleet.innodb.storage_facts:
    login_unix_socket: /run/mysqld/mysqld.sock
  register: storage

- name: A given directory, with the latency probe
  dbfleet.innodb.storage_facts:
    path: /var/lib/mysql
    probe: true
  register: storage

- name: An LVM volume by its device-mapper path
  dbfleet.innodb.storage_facts:
    device: /dev/mapper/vg_data-lv_mysql

- name: A recorded sysfs tree from another machine
  dbfleet.innodb.storage_facts:
    path: /var/lib/mysql
    sysfs_root: /tmp/host42/sys
    proc_root: /tmp/host42/proc
'''

RETURN = r'''
storage_class:
  description: V(ssd), V(hdd), V(mixed) (some devices SSD, some HDD) or V(unknown).
  returned: always
  type: str
  sample: ssd
confidence:
  description:
    - V(high) when every device's evidence is trustworthy (NVMe over PCIe, a SATA/SAS disk reporting its own
      flag, zram) or the probe agreed; V(low) otherwise (virtual disks, hardware RAID, network volumes,
      a verdict from the probe alone). V(unknown) always has V(low).
  returned: always
  type: str
  sample: high
reasons:
  description: The chain of evidence, in plain words, ending with the verdict.
  returned: always
  type: list
  elements: str
  sample:
    - /var/lib/mysql is on /var/lib/mysql (xfs, nvme0n1p3)
    - "nvme0n1p3 is a partition: it has no rotational flag of its own; using its disk nvme0n1"
    - nvme0n1 is an NVMe namespace (Samsung SSD 970 EVO Plus 1TB) with rotational=0
    - every device below the path is SSD (nvme0n1)
devices:
  description: One entry per physical device under the path.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Kernel name.
      type: str
    maj_min:
      description: C(MAJ:MIN).
      type: str
    kind:
      description: nvme, virtio, xen, scsi, zram, ram, loop, mmc, nbd, rbd, zvol, hwraid or other.
      type: str
    transport:
      description:
        - For SCSI disks how they are attached (sata, sas, usb, virtio-scsi, hyperv, iscsi, fc, scsi).
        - For NVMe the controller's transport (pcie, tcp, rdma, fc).
      type: str
      returned: when known
    rotational:
      description: The device's C(queue/rotational) (0 or 1), null when unreadable.
      type: int
    vendor:
      description: C(device/vendor) when present.
      type: str
    model:
      description: C(device/model) when present.
      type: str
    discard:
      description: Whether the device accepts discard (C(queue/discard_max_bytes) above 0).
      type: bool
    discard_max_bytes:
      description: C(queue/discard_max_bytes).
      type: int
    storage_class:
      description: This device's verdict (ssd, hdd, unknown).
      type: str
    confidence:
      description: This device's confidence (high, low).
      type: str
    via:
      description: The devices between the filesystem and this one, top first.
      type: list
      elements: str
    sys_path:
      description: The device's directory under the sysfs root.
      type: str
  sample:
    - name: nvme0n1
      maj_min: "259:0"
      kind: nvme
      transport: pcie
      rotational: 0
      vendor: null
      model: Samsung SSD 970 EVO Plus 1TB
      discard: true
      discard_max_bytes: 2199023255040
      storage_class: ssd
      confidence: high
      via: [nvme0n1p3]
      sys_path: devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1
layers:
  description:
    - The devices between the filesystem and the physical devices (partitions, dm, md, loop), with their own
      attributes (dm name and uuid, md level, array_state and degraded count, loop backing file).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: md0, kind: md, level: raid1, array_state: clean, degraded: 1, raid_disks: 2, rotational: 1,
       children: [sda1], maj_min: "9:0", sys_path: devices/virtual/block/md0}
resolved_path:
  description: The path that was inspected, with symbolic links resolved.
  returned: when a path was inspected
  type: str
  sample: /var/lib/mysql
path_source:
  description: Where the path came from - V(path) (the option) or V(server) (C(@@datadir)).
  returned: when a path was inspected
  type: str
  sample: server
mount:
  description: The mount holding the path.
  returned: when a mount was found
  type: dict
  sample: {mount_point: /var/lib/mysql, fstype: xfs, source: /dev/nvme0n1p3, maj_min: "259:3", root: /}
device:
  description: The device given in O(device).
  returned: when O(device) was given
  type: str
  sample: dm-3
probe:
  description:
    - The latency probe's measurements and verdict. Its C(contradicts_sysfs) key is true when its verdict
      differs from the one sysfs gave.
  returned: when O(probe=true)
  type: dict
  sample: {reads: 200, files: 212, span_bytes: 216006656, median_ms: 0.178, p90_ms: 0.31, min_ms: 0.09,
           max_ms: 2.1, storage_class: ssd, reason: "probe: 200 random 4 KiB O_DIRECT reads, median 0.178 ms ..."}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage_probe
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import block_devices


def _server_datadir(module):
    conn = conn_utils.connect(module)
    try:
        row = query_one(conn, 'SELECT @@GLOBAL.datadir AS datadir')
    except Exception as e:  # PyMySQL errors; reported, not raised
        module.fail_json(msg='cannot read @@datadir from %s: %s' % (
            describe_target(module.params), error_text(e)))
    finally:
        conn.close()
    datadir = (row or {}).get('datadir')
    if isinstance(datadir, bytes):
        datadir = datadir.decode('utf-8', 'replace')
    if not datadir:
        module.fail_json(msg='the server at %s reported no datadir' % describe_target(module.params))
    return datadir


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        path=dict(type='path'),
        device=dict(type='str'),
        sysfs_root=dict(type='path', default='/sys'),
        proc_root=dict(type='path', default='/proc'),
        probe=dict(type='bool', default=False),
        probe_max_reads=dict(type='int', default=200),
        probe_max_seconds=dict(type='float', default=2.0),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[('path', 'device')])
    params = module.params

    if not 1 <= params['probe_max_reads'] <= 1000:
        module.fail_json(msg='probe_max_reads must be between 1 and 1000, got %s' % params['probe_max_reads'])
    if not 0.1 <= params['probe_max_seconds'] <= 5:
        module.fail_json(msg='probe_max_seconds must be between 0.1 and 5, got %s' % params['probe_max_seconds'])
    if params['device'] is not None and not block_devices.valid_device_name(
            params['device'][5:] if params['device'].startswith('/dev/') else params['device']):
        module.fail_json(msg='device %r is not a block device name (sda, nvme0n1p2, dm-3), MAJ:MIN or /dev path'
                         % params['device'])
    if params['device'] is not None and params['probe']:
        module.fail_json(msg='probe needs a path (it reads existing files); it cannot run with device')
    for opt in ('sysfs_root', 'proc_root'):
        if not storage.os.path.isdir(params[opt]):
            module.fail_json(msg='%s %s is not a directory' % (opt, params[opt]))

    inspector = storage.Inspector(params['sysfs_root'], params['proc_root'])
    if params['device'] is not None:
        ddir = inspector.device_dir(params['device'])
        if ddir is None:
            module.fail_json(msg='device %s not found under %s (class/block or dev/block)'
                             % (params['device'], params['sysfs_root']))
        result = inspector.inspect_device(params['device'], ddir)
    else:
        if params['path']:
            path, source = params['path'], 'path'
        else:
            path, source = _server_datadir(module), 'server'
        result = inspector.inspect_path(path)
        result['path_source'] = source
        if params['probe']:
            skip = storage_probe.probe_skip_reason(result)
            if skip:
                probe = dict(reads=0, storage_class=storage.UNKNOWN, reason=skip)
            elif inspector.live and storage.os.path.exists(result.get('resolved_path') or path):
                probe = storage_probe.probe_latency(result.get('resolved_path') or path, params['probe_max_reads'],
                                                    params['probe_max_seconds'])
            else:
                probe = dict(reads=0, storage_class=storage.UNKNOWN,
                             reason='probe: the path must exist on this host and the live sysfs/proc be used')
            result = storage_probe.combine_probe(result, probe)

    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
