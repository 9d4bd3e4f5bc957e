# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files a table owns (module_utils/guarded/table_files.py): the catalog's query per flavor, the rows that are the
table's, the system and general tablespaces left alone, a path as the server names it seen from this host."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import table_files as s
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.guarded.staged_fakes import catalog_row as _row


def test_filename_encoding_is_the_servers():
    assert s.filename_encode('orders_2019') == 'orders_2019'
    assert s.filename_encode('t$1') == 't@00241'     # what the lab's MySQL 8.0 and MariaDB 10.11 write


def test_catalog_query_per_flavor():
    mysql = capability_facts.capability('tablespace_files_catalog', 'mysql', (8, 0, 33))
    sql, args = s.catalog_query(mysql, 'shop', 'order_x')
    assert 'information_schema.INNODB_DATAFILES d' in sql and 'd.PATH AS path' in sql and 's.SPACE_TYPE' in sql
    assert args == ('shop/order_x', 'shop/order_x', 'shop/order\\_x#%')
    maria = capability_facts.capability('tablespace_files_catalog', 'mariadb', (10, 11, 6))
    sql, _args = s.catalog_query(maria, 'shop', 't$1')
    assert 's.FILENAME AS path' in sql and 'DATAFILES' not in sql and 'NULL AS space_type' in sql
    assert _args[0] == 'shop/t@00241'
    assert capability_facts.capability('tablespace_files_catalog', 'mariadb', (10, 5, 9))['datafiles'].endswith('SYS_DATAFILES')
    assert capability_facts.capability('tablespace_files_catalog', 'mysql', (5, 6, 40)) is None


def test_owned_files_mysql8_partitions_and_a_lookalike():
    rows = [_row('shop/orders#p#p0', 3, './shop/orders#p#p0.ibd', 'Single'),
            _row('shop/orders#p#p1', 4, './shop/orders#p#p1.ibd', 'Single'),
            _row('shop/orders_old', 5, './shop/orders_old.ibd', 'Single')]   # LIKE with _ escaped, still filtered
    files, alone = s.owned_files(rows, 'shop', 'orders')
    assert [f['partition'] for f in files] == ['p0', 'p1'] and alone is None
    assert files[0]['path'] == './shop/orders#p#p0.ibd'


def test_owned_files_mariadb_partitions_and_encoded_name():
    rows = [_row('shop/t@00241#P#p0', 6, './shop/t@00241#P#p0.ibd'),
            _row('shop/t@00241#P#p1', 7, './shop/t@00241#P#p1.ibd')]
    files, alone = s.owned_files(rows, 'shop', 't$1')
    assert [f['catalog_name'] for f in files] == ['shop/t@00241#P#p0', 'shop/t@00241#P#p1'] and alone is None


def test_system_and_general_tablespaces_left_alone():
    files, alone = s.owned_files([_row('shop/g', 0, './ibdata1', None, 'innodb_system')], 'shop', 'g')
    assert files == [] and 'the system tablespace' in alone and 'left as it is' in alone
    files, alone = s.owned_files([_row('shop/g', 9, 'gts.ibd', 'General', 'gts')], 'shop', 'g')
    assert files == [] and 'general tablespace gts' in alone


def test_server_path_under_a_chroot():
    assert s.server_path('/', '/var/lib/mysql/', './shop/t.ibd') == '/var/lib/mysql/shop/t.ibd'
    assert s.server_path('/srv/root', '/var/lib/mysql', '/data/x.ibd') == '/srv/root/data/x.ibd'
