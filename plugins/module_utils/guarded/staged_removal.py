# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The staged file removal of drop_tables: a big table's files freed in steps after the DROP, not inside it.

DROP TABLE unlinks the table's .ibd files inside the statement; on ext4 the kernel frees every extent there
and then (and with the `discard` mount option trims them too), which on a table of hundreds of GiB is tens of
seconds of DROP and an I/O burst. Staged: every file the table owns gets a second name (a hard link) in a
directory of the collection on the datadir's filesystem just before its DROP; the DROP then removes one name
only; afterwards the linked file is truncated in steps (a size per step, a pause between, an upper bound on the
whole) and removed.

Safe by construction:
  - the files a table owns are read from the server's own catalog (capability_facts.py tablespace_files_catalog), never
    guessed from names; a table in the system or a general tablespace has no file of its own and is left alone
    (the result says so);
  - the staging directory is checked before anything: on the same device as the datadir and every file, owned
    by the server's user (the datadir's owner), not readable, writable or searchable by others; the filesystem's
    free space must be at least the run's margin (the links hold the tables' space until they are gone);
  - a file is truncated only through a link whose inode has no other name (st_nlink == 1): while the table's
    own name exists (its DROP failed, was not attempted, or has not reached this replica) the link is only
    removed, which frees nothing and costs nothing;
  - each run's links are listed in a manifest (a JSON file in the staging directory, written before each
    link is made): the next run finishes what an interrupted run left by its manifest, checking each link's
    device and inode, never by a file name's pattern.

This module holds the staging (the directory's checks, the links, the manifest, an interrupted run's leftovers);
the files a table owns are guarded/table_files.py's, the shrinking in steps guarded/shrink.py's.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, human_size, now_stamp
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import process_alive, process_start
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.shrink import (
    MIB, StepPacer, shrink_file, shrink_schedule, yield_to_the_server)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.table_files import catalog_query, owned_files, server_path
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.private_paths import open_private_file

MANIFEST_VERSION = 1
MANIFEST_PREFIX = 'dbfleet-staged-'
# The staging directory's name beside the datadir when the run gives none (a directory inside the datadir would
# be a database to MariaDB: SHOW DATABASES lists it as #mysql50#<name>).
DEFAULT_STAGING_NAME = 'dbfleet-staged-drop'

# The staged removal's options, with their defaults and ranges: part of drop_rules.DROP_OPTIONS (the module's
# argument spec and range check, drop_tables.yml's inputs).
STAGED_OPTIONS = dict(
    file_removal=dict(type='str', choices=['immediate', 'staged'], default='immediate'),
    staging_dir=dict(type='path'),
    server_root=dict(type='path', default='/'),
    shrink_step_mb=dict(type='int', default=256, range=(1, 1048576)),
    shrink_pause=dict(type='float', default=0.5, range=(0, 3600)),
    shrink_step_seconds=dict(type='float', default=0.05, range=(0.001, 60)),
    shrink_max_seconds=dict(type='int', default=3600, range=(1, 604800)),
    free_space_margin_mb=dict(type='int', default=1024, range=(0, None)),
    finish_staged_only=dict(type='bool', default=False),
)


# ---------------------------------------------------------------- checks
def default_staging_dir(datadir):
    """The staging directory when the run gives none: beside the datadir (same parent)."""
    return os.path.join(os.path.dirname(os.path.normpath(datadir)), DEFAULT_STAGING_NAME)


def staging_dir_problems(staging, st, datadir, datadir_st):
    """Why the staging directory (its os.lstat st) cannot hold the links (empty list when it can): a real
    directory on the datadir's device, owned by the server's user (the datadir's owner), no access for others."""
    out = []
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        out.append('%s is not a directory (a symbolic link is not followed)' % staging)
        return out
    if st.st_dev != datadir_st.st_dev:
        out.append('%s is on another filesystem than the datadir %s (device %d, not %d): a hard link can only be made '
                   'on the same filesystem; give staging_dir on the datadir\'s filesystem' % (
                       staging, datadir, st.st_dev, datadir_st.st_dev))
    if st.st_uid != datadir_st.st_uid:
        out.append('%s belongs to uid %d, not to the server\'s user (uid %d, the owner of %s)' % (
            staging, st.st_uid, datadir_st.st_uid, datadir))
    if st.st_mode & 0o007:
        out.append('%s is open to others (mode %s): the links hold the tables\' data; it must be 0700 or 0750' % (
            staging, oct(stat.S_IMODE(st.st_mode))))
    return out


def free_space_problem(free_bytes, margin_bytes, held_bytes):
    """The refusal when the filesystem has less free space than the run's margin, else None."""
    if free_bytes >= margin_bytes:
        return None
    return ('the filesystem of the staging directory has %s free, less than free_space_margin_mb (%s); the links '
            'would hold another %s until they are shrunk' % (human_size(free_bytes), human_size(margin_bytes),
                                                             human_size(held_bytes)))


def leftover_action(entry, st, writer_alive):
    """What to do with one link a manifest lists, from its os.lstat (None when the name is gone):
    'gone' (nothing left), 'busy' (the run that wrote it still works on it), 'foreign' (the name holds another
    file now: left alone), 'release' (the table's own file still has its name: only our name goes, nothing is
    freed), 'shrink' (ours is the only name left: truncate in steps and remove)."""
    if st is None:
        return 'gone'
    if writer_alive:
        return 'busy'
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (entry.get('dev'), entry.get('ino')):
        return 'foreign'
    if st.st_nlink > 1:
        return 'release'
    return 'shrink'


def link_name(run_stamp, index, entry):
    """The link's name in the staging directory: the run, a counter, the table and partition (for people
    reading the directory; the manifest, not the name, says what a link is)."""
    return '%s-%03d-%s' % (run_stamp, index, os.path.basename(entry['source']))


# ---------------------------------------------------------------- the files
class StagedRemoval(object):
    """The staged removal of one run on one server: plan (the files, the checks), link before each DROP,
    release after a failed one, shrink and remove after the drops, finish what an interrupted run left."""

    def __init__(self, params, datadir, check_mode=False, sleep=None, clock=None, run_id=None):
        import time
        self.p = params
        self.check_mode = check_mode
        self.sleep = sleep or time.sleep
        self.clock = clock or time.monotonic
        self.server_root = params.get('server_root') or '/'
        self.datadir = server_path(self.server_root, datadir, datadir)
        self.staging = params.get('staging_dir') or default_staging_dir(self.datadir)
        self.step_bytes = int(params.get('shrink_step_mb') or 256) * MIB
        self.pause = float(params.get('shrink_pause') if params.get('shrink_pause') is not None else 0.5)
        self.step_bound = float(params.get('shrink_step_seconds') or STAGED_OPTIONS['shrink_step_seconds']['default'])
        self.bound = int(params.get('shrink_max_seconds') or 3600)
        self.margin = int(params.get('free_space_margin_mb') or 0) * MIB
        self.run_stamp = '%s-%d-%s' % (now_stamp(), os.getpid(), os.urandom(3).hex())
        self.run_id = run_id
        self.manifest_path = os.path.join(self.staging, '%s%s.json' % (MANIFEST_PREFIX, self.run_stamp))
        self.files = []           # one entry per file: table, partition, source, link, dev, ino, bytes, state
        self.left_alone = []
        self.schedule = None
        self.space = None
        self.leftovers = None
        self.removed = []
        self.released = []
        self.shrink_seconds = None
        self.shrink_steps = None
        self.changed = False
        self._manifest = None
        self._leftover_inodes = set()

    def report(self):
        return dict(mode='staged', staging_dir=self.staging, files=self.files, left_alone=self.left_alone,
                    schedule=self.schedule, space=self.space, leftovers=self.leftovers,
                    removed=self.removed, released=self.released, shrink_seconds=self.shrink_seconds,
                    shrink_steps=self.shrink_steps)

    # ------------------------------------------------------------ before anything changes
    def plan_tables(self, conn_query, catalog, tables):
        """Read the files of each table (entries of Drop.tables that exist) from the catalog; check that each
        is here, a regular file with one name, on the datadir's device. Returns the problems (refusals)."""
        problems = []
        if not catalog:
            return ['this server\'s version has no InnoDB catalog of data files the collection knows '
                    '(capability_facts.py tablespace_files_catalog): use file_removal=immediate']
        for t in tables:
            if (t.get('engine') or '').lower() != 'innodb':
                self.left_alone.append('%s is %s, not InnoDB: its files are the engine\'s, left as they are'
                                       % (t['name'], t.get('engine')))
                continue
            sql, args = catalog_query(catalog, t['schema'], t['table'])
            files, alone = owned_files(conn_query(sql, args), t['schema'], t['table'])
            if alone:
                self.left_alone.append(alone)
            if not files and not alone:
                problems.append('%s: the catalog lists no tablespace for it' % t['name'])
            for f in files:
                source = server_path(self.server_root, self.datadir, f['path'])
                entry = dict(table=t['name'], partition=f['partition'], source=source, link=None,
                             catalog_path=f['path'], state='planned')
                try:
                    st = os.lstat(source)
                except OSError as e:
                    problems.append('%s: its file %s is not here (%s); run the module on the database host '
                                    '(with become), or set server_root when the server runs in a chroot or '
                                    'container' % (t['name'], source, e.strerror or e))
                    continue
                if not stat.S_ISREG(st.st_mode):
                    problems.append('%s: %s is not a regular file' % (t['name'], source))
                    continue
                if st.st_nlink != 1 and not (self.check_mode and (st.st_dev, st.st_ino) in self._leftover_inodes):
                    problems.append('%s: %s already has %d names (a hard link made by someone else?): refusing to '
                                    'add another' % (t['name'], source, st.st_nlink))
                entry.update(dev=st.st_dev, ino=st.st_ino, bytes=st.st_size, allocated_bytes=st.st_blocks * 512,
                             size=human_size(st.st_size))
                self.files.append(entry)
        return problems

    def check_staging(self):
        """The staging directory's checks (created 0700 for the server's user when missing, not in check
        mode), every file on its device, the free-space margin and the schedule's bound. Returns problems."""
        try:
            dst = os.stat(self.datadir)
        except OSError as e:
            return ['the datadir %s is not here (%s): run the module on the database host' % (
                self.datadir, e.strerror or e)]
        try:
            st = os.lstat(self.staging)
        except FileNotFoundError:
            st = None
        problems = []
        if st is None:
            parent = os.path.dirname(os.path.normpath(self.staging))
            try:
                pst = os.stat(parent)
            except OSError as e:
                return ['staging_dir %s: its parent cannot be read (%s)' % (self.staging, e.strerror or e)]
            if pst.st_dev != dst.st_dev:
                return ['staging_dir %s would be on another filesystem than the datadir %s: give staging_dir on the '
                        'datadir\'s filesystem' % (self.staging, self.datadir)]
            self.space = self._space(parent)
        else:
            problems.extend(staging_dir_problems(self.staging, st, self.datadir, dst))
            self.space = self._space(self.staging)
        for f in self.files:
            if f.get('dev') is not None and f['dev'] != dst.st_dev:
                problems.append('%s: %s is on another filesystem than the datadir (DATA DIRECTORY?): it cannot be '
                                'linked there' % (f['table'], f['source']))
        held = sum(f.get('allocated_bytes') or 0 for f in self.files)
        self.space.update(held_bytes=held, held=human_size(held), margin_bytes=self.margin, margin=human_size(self.margin))
        problem = free_space_problem(self.space['free_bytes'], self.margin, held)
        if problem:
            problems.append(problem)
        self.schedule = shrink_schedule([f['bytes'] for f in self.files], self.step_bytes, self.pause, self.bound)
        if not self.schedule['fits']:
            problems.append('the shrinking would take longer than shrink_max_seconds: %s' % self.schedule['text'])
        return problems

    @staticmethod
    def _space(path):
        sv = os.statvfs(path)
        free = sv.f_bavail * sv.f_frsize
        return dict(free_bytes=free, free=human_size(free))

    def ensure_staging(self):
        if os.path.lexists(self.staging):
            return
        dst = os.stat(self.datadir)
        os.mkdir(self.staging, 0o700)
        os.chown(self.staging, dst.st_uid, dst.st_gid)
        os.chmod(self.staging, 0o700)

    def plan_lines(self):
        out = []
        for f in self.files:
            out.append('link %s (%s) into %s before its DROP' % (f['source'], f['size'], self.staging))
        for text in self.left_alone:
            out.append(text)
        if self.files:
            out.append('the links hold %s until they are gone; the filesystem has %s free (margin %s)' % (
                self.space['held'], self.space['free'], self.space['margin']))
            out.append('after the DROP: shrink %s' % self.schedule['text'])
        return out

    # ------------------------------------------------------------ the manifest
    def _write_manifest(self):
        if self._manifest is None:
            self._manifest = dict(version=MANIFEST_VERSION, run_id=self.run_id, pid=os.getpid(),
                                  pid_start=process_start(os.getpid()), started=now_stamp(),
                                  step_bytes=self.step_bytes, pause=self.pause, links=[])
        keys = ('table', 'partition', 'source', 'link', 'dev', 'ino', 'bytes', 'state')
        self._manifest['links'] = [dict((k, f.get(k)) for k in keys) for f in self.files if f.get('link')]
        write_json(self.manifest_path, self._manifest)

    def _manifest_done(self):
        if any(f.get('link') and f['state'] not in ('removed', 'released') for f in self.files):
            self._write_manifest()
            return
        try:
            os.unlink(self.manifest_path)
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------ around each DROP
    def link_table(self, name):
        """Give each file of table name a second name in the staging directory (the manifest first)."""
        todo = [f for f in self.files if f['table'] == name and f['state'] == 'planned']
        if not todo:
            return
        self.ensure_staging()
        for f in todo:
            f['link'] = os.path.join(self.staging, link_name(self.run_stamp, self.files.index(f), f))
            f['state'] = 'linking'
            self._write_manifest()
            os.link(f['source'], f['link'], follow_symlinks=False)
            st = os.lstat(f['link'])
            if (st.st_dev, st.st_ino) != (f['dev'], f['ino']):
                os.unlink(f['link'])
                f['state'] = 'released'
                raise GuardedError('%s: %s changed since it was checked (another inode): its link was removed, nothing '
                                   'dropped' % (name, f['source']))
            f['state'] = 'linked'
            self.changed = True
        self._write_manifest()

    def release_table(self, name):
        """The table still exists (its DROP failed or was not attempted): its links go at once (nothing freed)."""
        for f in self.files:
            if f['table'] == name and f.get('link') and f['state'] in ('linking', 'linked'):
                _unlink_quiet(f['link'])
                f['state'] = 'released'
                self.released.append(f['link'])
        self._manifest_done()

    def dropped_table(self, name):
        for f in self.files:
            if f['table'] == name and f['state'] == 'linked':
                f['state'] = 'dropped'
        self._write_manifest()

    # ------------------------------------------------------------ after the drops
    def shrink_all(self):
        """Shrink and remove every link whose table is gone, within the bound (what is left when it runs out
        is removed at once). Links whose file still has its table's name are released instead."""
        started = self.clock()
        pacer = self.pacer(started + self.bound)
        for f in self.files:
            if not f.get('link') or f['state'] not in ('dropped', 'linked'):
                continue
            outcome = shrink_file(f['link'], (f['dev'], f['ino']), pacer, on_step=self._write_manifest)
            f['state'] = outcome
            (self.removed if outcome == 'removed' else self.released).append(f['link'])
            self.changed = True
            self._write_manifest()
        self.shrink_seconds = round(self.clock() - started, 3)
        self.shrink_steps = pacer.report()
        self._manifest_done()

    def pacer(self, deadline):
        """The pacer of a shrinking, which then runs below the server (yield_to_the_server)."""
        yield_to_the_server()
        return StepPacer(self.step_bytes, self.pause, self.step_bound, deadline, self.sleep, self.clock)

    def finish_leftovers(self):
        """Finish what earlier runs' manifests in the staging directory list (an interrupted run's links):
        each link checked by device and inode; shrunk and removed when its table's name is gone, only
        removed when it is not. In check mode: what would be done."""
        self.leftovers = dict(manifests=[], actions=[], findings=[])
        if not os.path.isdir(self.staging) or os.path.islink(self.staging):
            return self.leftovers
        for path in sorted(glob.glob(os.path.join(glob.escape(self.staging), MANIFEST_PREFIX + '*.json'))):
            if path == self.manifest_path:
                continue
            data = read_json(path)
            if data is None:
                self.leftovers['findings'].append('%s is not a manifest this collection can read: left alone' % path)
                continue
            self.leftovers['manifests'].append(path)
            alive = process_alive(data.get('pid'), data.get('pid_start'))
            open_links = 0
            for entry in data.get('links') or []:
                link = entry.get('link')
                if not link or os.path.dirname(link) != self.staging:
                    self.leftovers['findings'].append('%s names %r outside the staging directory: left alone'
                                                      % (path, link))
                    continue
                try:
                    st = os.lstat(link)
                except FileNotFoundError:
                    st = None
                action = leftover_action(entry, st, alive)
                if action == 'gone':
                    continue
                self._leftover_inodes.add((entry.get('dev'), entry.get('ino')))
                if action in ('busy', 'foreign'):
                    open_links += 1
                    self.leftovers['findings'].append('%s: %s' % (link, 'the run that made it (pid %s) still runs'
                                                                  % data.get('pid') if action == 'busy' else
                                                                  'another file has that name now: left alone'))
                    continue
                self.leftovers['actions'].append('%s %s (%s of %s, left by run %s)' % (
                    'shrink and remove' if action == 'shrink' else 'remove the second name of', link,
                    human_size(st.st_size), entry.get('table'), data.get('run_id') or data.get('pid')))
                if self.check_mode:
                    self.changed = True
                    continue
                outcome = shrink_file(link, (entry['dev'], entry['ino']), self.pacer(self.clock() + self.bound))
                (self.removed if outcome == 'removed' else self.released).append(link)
                self.changed = True
            if not self.check_mode and not open_links and not alive:
                _unlink_quiet(path)
        return self.leftovers


def _unlink_quiet(path):
    try:
        os.unlink(path)
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise


def write_json(path, data):
    tmp = '%s.%d.tmp' % (path, os.getpid())
    _unlink_quiet(tmp)
    fd = open_private_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, 'w') as handle:
        json.dump(data, handle, sort_keys=True)
    os.rename(tmp, path)


def read_json(path):
    try:
        fd = open_private_file(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        with os.fdopen(fd) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get('version') == MANIFEST_VERSION else None
