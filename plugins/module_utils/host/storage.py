# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What kind of storage is under a path: SSD, HDD, a mix, or unknown.

The judgement is pure, so it can be tested without a machine: classify() goes from a device tree (read by
host/block_devices.py from the live /sys or a recorded copy: the filesystem's device down to every physical device)
to storage_class, confidence, devices and reasons, by what each kind of device's rotational flag is worth
(judge_leaf()). Inspector resolves a path or a device name to its tree and classifies it; detect_datadir() is the
verdict the roles decide on, with the optional latency probe of host/storage_probe.py combined in.
"""

from __future__ import annotations

import os
import re
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import block_devices

SSD = 'ssd'
HDD = 'hdd'
MIXED = 'mixed'
UNKNOWN = 'unknown'
STORAGE_CLASSES = (SSD, HDD, MIXED, UNKNOWN)
HIGH = 'high'
LOW = 'low'

# ---------------------------------------------------------------- knowledge (data)
# Device kinds by kernel name. The first matching pattern wins.
KIND_BY_NAME = (
    (re.compile(r'^nvme\d+(c\d+)?n\d+$'), 'nvme'),
    (re.compile(r'^vd[a-z]+$'), 'virtio'),
    (re.compile(r'^xvd[a-z]+$'), 'xen'),
    (re.compile(r'^sd[a-z]+$'), 'scsi'),
    (re.compile(r'^md\d+$|^md_d\d+$'), 'md'),
    (re.compile(r'^dm-\d+$'), 'dm'),
    (re.compile(r'^loop\d+$'), 'loop'),
    (re.compile(r'^zram\d+$'), 'zram'),
    (re.compile(r'^ram\d+$'), 'ram'),
    (re.compile(r'^mmcblk\d+$'), 'mmc'),
    (re.compile(r'^nbd\d+$'), 'nbd'),
    (re.compile(r'^rbd\d+$'), 'rbd'),
    (re.compile(r'^bcache\d+$'), 'bcache'),
    (re.compile(r'^zd\d+$'), 'zvol'),
    (re.compile(r'^cciss!c\d+d\d+$'), 'hwraid'),
)

# Where an sd device hangs in /sys/devices tells how it is attached.
SCSI_TRANSPORT_MARKERS = (
    ('/virtio', 'virtio-scsi'),
    ('/usb', 'usb'),
    ('/ata', 'sata'),
    ('VMBUS', 'hyperv'),
    ('/vmbus', 'hyperv'),
    ('/end_device-', 'sas'),
    ('/rport-', 'fc'),
    ('/session', 'iscsi'),
)

# SCSI disks a hypervisor presents: their rotational flag is whatever the hypervisor chose
# (QEMU says 1 unless rotation_rate=1 is configured).
VIRTUAL_DISK_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r'^QEMU\b', r'^VMware', r'^Msft\b.*Virtual', r'^VBOX\b', r'^Google\b.*PersistentDisk',
    r'^Virtual disk', r'^NUTANIX', r'^Xen\b',
))

# Logical volumes of hardware RAID controllers: the controller decides what the flag says.
HWRAID_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r'\bPERC\b', r'LOGICAL VOLUME', r'MegaRAID', r'^(LSI|AVAGO|BROADCOM|Adaptec|ASR)\b', r'\bMR9\d',
    r'ServeRAID', r'\bRAID\b', r'UCSC-RAID', r'Smart Array',
))

# NVMe namespaces that are network volumes: rotational=0 whatever the backing media.
NETWORK_NVME_MODELS = (
    (re.compile(r'Amazon Elastic Block Store', re.IGNORECASE),
     'Amazon EBS volumes appear as NVMe with rotational=0 whatever the volume type '
     '(st1 and sc1 are HDD-backed)'),
    (re.compile(r'^nvme_card-pd', re.IGNORECASE),
     'Google Persistent Disk appears as NVMe with rotational=0 whatever the disk type '
     '(pd-standard is HDD-backed)'),
)

# A model name that says SSD, for a device whose flag says otherwise.
SSD_MODEL_RE = re.compile(r'\bSSD\b|Solid State|\bNVMe\b|\bFlash\b|MZ7|MZ-7|INTEL SSD', re.IGNORECASE)

# dm uuid prefix -> what the mapping is.
DM_TARGETS = (
    ('LVM-', 'lvm'),
    ('CRYPT-', 'crypt'),
    ('mpath-', 'multipath'),
    ('part', 'partition'),
    ('VDO-', 'vdo'),
    ('CACHE', 'cache'),
    ('stratis-', 'stratis'),
)


# ---------------------------------------------------------------- judgement (pure)
def device_kind(facts):
    """Kind of a block device from its facts: nvme, virtio, scsi, md, dm, loop, zram, ..."""
    if facts.get('partition'):
        return 'partition'
    name = facts.get('name') or ''
    for pattern, kind in KIND_BY_NAME:
        if pattern.match(name):
            return kind
    path = facts.get('sys_path') or ''
    if '/virtio' in path:
        return 'virtio'
    return 'other'


def scsi_transport(facts):
    path = facts.get('sys_path') or ''
    for marker, transport in SCSI_TRANSPORT_MARKERS:
        if marker in path:
            return transport
    return 'scsi'


def dm_target(facts):
    uuid = facts.get('dm_uuid') or ''
    for prefix, target in DM_TARGETS:
        if uuid.startswith(prefix):
            return target
    return 'dm'


def _label(facts):
    parts = [p for p in (facts.get('vendor'), facts.get('model')) if p]
    return ' '.join(' '.join(parts).split())


def _any_match(patterns, text):
    return any(p.search(text) for p in patterns)


def judge_leaf(facts):
    """(storage_class, confidence, reasons) for one physical (leaf) device."""
    kind = device_kind(facts)
    name = facts.get('name')
    rot = facts.get('rotational')
    label = _label(facts)
    reasons = []

    if kind == 'zram':
        return SSD, HIGH, ['%s is zram (compressed RAM): no seeks, treated as SSD' % name]
    if kind == 'ram':
        return SSD, HIGH, ['%s is a RAM disk: no seeks, treated as SSD' % name]
    if kind == 'loop':
        if facts.get('loop_backing_file'):
            note = facts.get('backing_note') or 'its storage could not be resolved'
            return UNKNOWN, LOW, ['%s is a loop device over %s; %s' % (
                name, facts['loop_backing_file'], note)]
        return UNKNOWN, LOW, ['%s is a loop device with no backing file' % name]
    if kind in ('nbd', 'rbd'):
        return UNKNOWN, LOW, ['%s is a network block device (%s): its rotational flag does not '
                              'describe the remote storage' % (name, kind)]
    if kind in ('dm', 'md', 'bcache'):
        return UNKNOWN, LOW, ['%s is a %s device without underlying devices visible in slaves/'
                              % (name, kind)]
    if rot not in (0, 1):
        return UNKNOWN, LOW, ['%s has no readable queue/rotational' % name]
    flag_class = SSD if rot == 0 else HDD

    if kind in ('virtio', 'xen'):
        what = 'virtio-blk' if kind == 'virtio' else 'Xen blkfront'
        if rot == 1:
            return UNKNOWN, LOW, ['%s: %s always reports rotational=1; the flag says nothing here '
                                  '(set the override, or enable the latency probe)' % (name, what)]
        return SSD, LOW, ['%s: %s reports rotational=0, which the hypervisor must have been '
                          'configured to say' % (name, what)]
    if kind == 'nvme':
        transport = (facts.get('transport') or 'pcie').lower()
        for pattern, why in NETWORK_NVME_MODELS:
            if pattern.search(label):
                return flag_class, LOW, ['%s (%s): %s' % (name, label, why)]
        if transport not in ('pcie', 'loop'):
            return flag_class, LOW, ['%s is NVMe over %s: the flag describes the target, not the '
                                     'media behind it' % (name, transport)]
        return flag_class, HIGH, ['%s is an NVMe namespace%s with rotational=%d' % (
            name, ' (%s)' % label if label else '', rot)]
    if kind in ('scsi', 'hwraid', 'mmc', 'zvol', 'other'):
        if kind == 'mmc':
            return SSD, HIGH, ['%s is eMMC/SD flash' % name]
        if kind == 'zvol':
            return flag_class, LOW, ['%s is a ZFS zvol: rotational=%d describes the zvol, not the '
                                     'pool\'s vdevs' % (name, rot)]
        transport = scsi_transport(facts) if kind == 'scsi' else kind
        desc = '%s (%s%s)' % (name, transport, ', %s' % label if label else '')
        if kind == 'hwraid' or _any_match(HWRAID_PATTERNS, label):
            return flag_class, LOW, ['%s is a hardware RAID logical volume: the controller decides '
                                     'what rotational=%d says; set the override if it is wrong'
                                     % (desc, rot)]
        if transport == 'virtio-scsi' or _any_match(VIRTUAL_DISK_PATTERNS, label):
            if rot == 1:
                return UNKNOWN, LOW, ['%s is a virtual disk: hypervisors report rotational=1 by '
                                      'default; the flag says nothing here' % desc]
            return SSD, LOW, ['%s is a virtual disk reporting rotational=0 (set by the hypervisor)'
                              % desc]
        if rot == 1 and SSD_MODEL_RE.search(label):
            return SSD, LOW, ['%s reports rotational=1 but its model names an SSD' % desc]
        if transport in ('usb', 'iscsi', 'fc'):
            return flag_class, LOW, ['%s is attached over %s: rotational=%d is what the bridge '
                                     'or target reports' % (desc, transport, rot)]
        reasons.append('%s reports rotational=%d%s' % (
            desc, rot, ' and supports discard' if rot == 0 and facts.get('discard_max_bytes') else ''))
        return flag_class, HIGH, reasons
    return flag_class, LOW, ['%s (%s) reports rotational=%d' % (name, kind, rot)]


def _device_entry(node, via, judged):
    storage_class, confidence = judged[0], judged[1]
    entry = dict(
        name=node.get('name'),
        maj_min=node.get('dev'),
        kind=device_kind(node),
        rotational=node.get('rotational'),
        vendor=node.get('vendor'),
        model=node.get('model'),
        discard=bool(node.get('discard_max_bytes')),
        discard_max_bytes=node.get('discard_max_bytes'),
        storage_class=storage_class,
        confidence=confidence,
        via=list(via),
        sys_path=node.get('sys_path'),
    )
    if entry['kind'] == 'scsi':
        entry['transport'] = scsi_transport(node)
    elif node.get('transport'):
        entry['transport'] = node.get('transport')
    if node.get('loop_backing_file'):
        entry['backing_file'] = node['loop_backing_file']
    return entry


def _layer_entry(node):
    kind = device_kind(node)
    entry = dict(name=node.get('name'), maj_min=node.get('dev'), kind=kind,
                 rotational=node.get('rotational'), sys_path=node.get('sys_path'),
                 children=[c.get('name') for c in node.get('children', [])])
    if kind == 'dm':
        entry.update(dm_name=node.get('dm_name'), dm_uuid=node.get('dm_uuid'), target=dm_target(node))
    if kind == 'md':
        entry.update(level=node.get('md_level'), array_state=node.get('md_array_state'),
                     degraded=node.get('md_degraded'), raid_disks=node.get('md_raid_disks'))
    if kind == 'loop':
        entry['backing_file'] = node.get('loop_backing_file')
    return entry


def _layer_reasons(node):
    kind = device_kind(node)
    name = node.get('name')
    children = [c.get('name') for c in node.get('children', [])]
    out = []
    if kind == 'partition':
        out.append('%s is a partition: it has no rotational flag of its own; using its disk %s'
                   % (name, ', '.join(children)))
    elif kind == 'dm':
        target = dm_target(node)
        what = dict(lvm='an LVM logical volume', crypt='a dm-crypt mapping', multipath='a multipath map',
                    vdo='a VDO volume', cache='a dm-cache volume').get(target, 'a device-mapper device')
        out.append('%s (%s) is %s over %s; its own rotational=%s is only 0 when every device '
                   'below is, so the devices below are judged instead'
                   % (name, node.get('dm_name') or '?', what, ', '.join(children) or 'nothing',
                      node.get('rotational')))
    elif kind == 'md':
        degraded = node.get('md_degraded')
        raid_disks = node.get('md_raid_disks')
        out.append('%s is md %s over %s' % (name, node.get('md_level') or 'RAID',
                                            ', '.join(children) or 'nothing'))
        if degraded:
            out.append('%s is degraded (%s of %s members missing, array_state=%s): its own '
                       'rotational flag (%s) is not meaningful; judged from the members present'
                       % (name, degraded, raid_disks if raid_disks is not None else '?',
                          node.get('md_array_state'), node.get('rotational')))
    elif kind == 'loop' and node.get('backing_device'):
        out.append('%s is a loop device over %s; judged by the storage under that file'
                   % (name, node.get('loop_backing_file')))
    elif kind == 'bcache':
        out.append('%s is bcache over %s' % (name, ', '.join(children)))
    return out


def classify(tree):
    """storage_class, confidence, devices (leaves), layers and reasons for a device tree."""
    devices, layers, reasons = [], [], []
    seen_leaves = set()

    def walk(node, via):
        if node.get('cycle'):
            reasons.append('the device tree loops at %s; stopped there' % node.get('name'))
            return
        if node.get('children'):
            layers.append(_layer_entry(node))
            reasons.extend(_layer_reasons(node))
            for child in node['children']:
                walk(child, via + [node.get('name')])
            return
        key = node.get('sys_path') or node.get('name')
        if key in seen_leaves:
            return
        seen_leaves.add(key)
        judged = judge_leaf(node)
        devices.append(_device_entry(node, via, judged))
        reasons.extend(judged[2])

    walk(tree, [])
    storage_class, confidence, summary = aggregate(devices)
    reasons.append(summary)
    return dict(storage_class=storage_class, confidence=confidence, devices=devices,
                layers=layers, reasons=reasons)


def aggregate(devices):
    """(storage_class, confidence, summary) for the judged leaf devices."""
    if not devices:
        return UNKNOWN, LOW, 'no physical device found'
    classes = [d['storage_class'] for d in devices]
    confidence = HIGH if all(d['confidence'] == HIGH for d in devices) else LOW
    unknown = [d['name'] for d in devices if d['storage_class'] == UNKNOWN]
    if unknown:
        return UNKNOWN, LOW, 'storage class unknown: no trustworthy answer for %s' % ', '.join(unknown)
    if all(c == SSD for c in classes):
        return SSD, confidence, 'every device below the path is SSD (%s)' % ', '.join(
            d['name'] for d in devices)
    if all(c == HDD for c in classes):
        return HDD, confidence, 'every device below the path is HDD (%s)' % ', '.join(
            d['name'] for d in devices)
    return MIXED, confidence, 'mixed: SSD %s, HDD %s' % (
        ', '.join(d['name'] for d in devices if d['storage_class'] == SSD),
        ', '.join(d['name'] for d in devices if d['storage_class'] == HDD))


def unknown_result(reason, **extra):
    result = dict(storage_class=UNKNOWN, confidence=LOW, devices=[], layers=[], reasons=[reason])
    result.update(extra)
    return result


# ---------------------------------------------------------------- the whole lookup (I/O)
def mount_result(mount):
    return dict(mount_point=mount['mount_point'], fstype=mount['fstype'], source=mount['source'],
                maj_min='%d:%d' % (mount['major'], mount['minor']), root=mount['root'])


def anonymous_reason(mount):
    fstype = mount['fstype']
    source = mount['source']
    if fstype == 'btrfs':
        return ('%s is on btrfs, which reports an anonymous device (%d:%d) instead of its disks; '
                'the mount source is %s: pass device=%s to inspect it, or set the override'
                % (mount['mount_point'], mount['major'], mount['minor'], source,
                   os.path.basename(source) if source.startswith('/dev/') else '<disk>'))
    if fstype == 'zfs':
        return ('%s is on ZFS dataset %s (anonymous device %d:%d): the pool\'s vdevs are not '
                'visible from the mount; pass device= for a vdev, or set the override'
                % (mount['mount_point'], source, mount['major'], mount['minor']))
    return ('%s is on %s (%s), which has no block device under it (anonymous device %d:%d)'
            % (mount['mount_point'], fstype, source, mount['major'], mount['minor']))


class Inspector(object):
    """Resolves a path or a device name to a device tree and classifies it."""

    def __init__(self, sysfs_root='/sys', proc_root='/proc', live=None):
        self.sysfs = block_devices.SysfsTree(sysfs_root)
        self.proc_root = proc_root
        # live: paths are checked and resolved on this host (the default roots)
        self.live = (os.path.realpath(sysfs_root) == '/sys' and os.path.realpath(proc_root) == '/proc'
                     ) if live is None else live
        self._mounts = None

    def mounts(self):
        if self._mounts is None:
            text = ''
            for rel in ('self/mountinfo', '1/mountinfo'):
                full = os.path.join(self.proc_root, rel)
                try:
                    with open(full, 'r') as f:
                        text = f.read()
                    break
                except (IOError, OSError):
                    continue
            self._mounts = block_devices.parse_mountinfo(text)
        return self._mounts

    def _real(self, path):
        """(resolved path, note or None); resolved is None when a live path does not exist."""
        if self.live:
            if not os.path.exists(path):
                return None, None
            return os.path.realpath(path), None
        if os.path.exists(path) and os.path.realpath(self.proc_root) == '/proc':
            return os.path.realpath(path), None
        return os.path.normpath(path), 'recorded tree: path taken as written'

    def _resolve_file(self, path):
        """For loop backing files: (device dir, note)."""
        text = path
        if text.endswith(' (deleted)'):
            return None, 'the backing file %s was deleted' % text[:-10]
        real = self._real(text)[0]
        if real is None:
            return None, 'the backing file does not exist on this host'
        mount = block_devices.find_mount(self.mounts(), real)
        if mount is None:
            return None, 'no mount holds the backing file'
        if mount['major'] == 0:
            return None, anonymous_reason(mount)
        ddir = self.sysfs.device_dir_by_majmin(mount['major'], mount['minor'])
        if ddir is None:
            return None, 'device %d:%d of the backing file is not in sysfs' % (mount['major'], mount['minor'])
        return ddir, 'backing file on %s' % os.path.basename(ddir)

    def inspect_path(self, path):
        real, note = self._real(path)
        if real is None:
            return unknown_result('%s does not exist on this host' % path, resolved_path=path)
        mounts = self.mounts()
        if not mounts:
            return unknown_result('no mount table could be read from %s/self/mountinfo' % self.proc_root,
                                  resolved_path=real)
        mount = block_devices.find_mount(mounts, real)
        if mount is None:
            return unknown_result('no mount holds %s' % real, resolved_path=real)
        extra = dict(resolved_path=real, mount=mount_result(mount))
        if mount['major'] == 0:
            return unknown_result(anonymous_reason(mount), **extra)
        ddir = self.sysfs.device_dir_by_majmin(mount['major'], mount['minor'])
        if ddir is None:
            return unknown_result('%s is on device %d:%d (%s), which sysfs does not list'
                                  % (mount['mount_point'], mount['major'], mount['minor'],
                                     mount['source']), **extra)
        result = classify(block_devices.build_tree(self.sysfs, ddir, self._resolve_file))
        result['reasons'].insert(0, '%s is on %s (%s, %s)' % (
            real, mount['mount_point'], mount['fstype'], os.path.basename(ddir)))
        if note:
            result['reasons'].insert(0, note)
        result.update(extra)
        return result

    def device_dir(self, device):
        """Device directory for a kernel name, MAJ:MIN or /dev path; None when unknown."""
        majmin = block_devices.parse_majmin(device)
        if majmin:
            return self.sysfs.device_dir_by_majmin(*majmin)
        if device.startswith('/dev/') and self.live and os.path.exists(device):
            st = os.stat(device)
            if stat.S_ISBLK(st.st_mode):
                return self.sysfs.device_dir_by_majmin(os.major(st.st_rdev), os.minor(st.st_rdev))
            return None
        name = device[5:] if device.startswith('/dev/') else device
        if not block_devices.VALID_DEVICE_RE.match(name):
            return None
        return self.sysfs.device_dir_by_name(name)

    def inspect_device(self, device, ddir):
        result = classify(block_devices.build_tree(self.sysfs, ddir, self._resolve_file))
        result['device'] = device
        return result


def detect_datadir(datadir, probe=False, sys_root='/sys', proc_root='/proc'):
    """The storage under a server's datadir, as the roles decide on it: the sysfs verdict, with the
    read-only latency probe combined in when probe is true (dbfleet.innodb.desired_settings and
    dbfleet.innodb.verify)."""
    # imported here: the probe module reads this one's storage classes
    from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage_probe
    result = Inspector(sys_root, proc_root).inspect_path(datadir)
    if probe:
        skip = storage_probe.probe_skip_reason(result)
        if skip:
            found = dict(reads=0, storage_class=UNKNOWN, reason=skip)
        elif os.path.exists(result.get('resolved_path') or datadir):
            found = storage_probe.probe_latency(result.get('resolved_path') or datadir, 200, 2.0)
        else:
            found = dict(reads=0, storage_class=UNKNOWN, reason='probe: the datadir must exist on this host')
        result = storage_probe.combine_probe(result, found)
    return result
