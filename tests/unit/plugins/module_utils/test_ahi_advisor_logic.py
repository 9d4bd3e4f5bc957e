# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decision logic of the AHI advisor and the adaptive_hash role (plugins/module_utils/ahi_advisor.py)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import ahi_advisor
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts


def ident(flavor, version, aurora_reader=None):
    return server_identity.ServerIdentity(flavor, tuple(version), '.'.join(map(str, version)), aurora_reader)


# ---------------------------------------------------------------- counter state column
@pytest.mark.parametrize('row,column,expected', [
    ({'STATUS': 'enabled'}, 'STATUS', True),
    ({'STATUS': 'disabled'}, 'STATUS', False),
    ({'status': 'Enabled'}, 'STATUS', True),
    ({'ENABLED': 1}, 'ENABLED', True),
    ({'ENABLED': 0}, 'ENABLED', False),
    ({'ENABLED': '1'}, 'ENABLED', True),
    ({'enabled': 0}, 'ENABLED', False),
])
def test_counter_enabled_both_columns(row, column, expected):
    assert ahi_advisor.counter_enabled(row, column) is expected


def test_column_comes_from_flavor_data():
    assert capability_facts.capability('innodb_metrics_enabled_column', 'mariadb', (10, 11, 6)) == 'ENABLED'
    assert capability_facts.capability('innodb_metrics_enabled_column', 'mariadb', (10, 4, 30)) == 'STATUS'
    assert capability_facts.capability('innodb_metrics_enabled_column', 'mysql', (8, 0, 33)) == 'STATUS'


def test_monitors_to_enable_only_the_ones_off():
    rows = [dict(NAME='adaptive_hash_searches', STATE=1), dict(NAME='adaptive_hash_searches_btree', STATE=1),
            dict(NAME='adaptive_hash_rows_added', STATE=0), dict(NAME='adaptive_hash_rows_removed', STATE=1),
            dict(NAME='adaptive_hash_pages_added', STATE=0), dict(NAME='unrelated', STATE=0)]
    assert ahi_advisor.monitors_to_enable(rows, 'ENABLED') == ['adaptive_hash_pages_added', 'adaptive_hash_rows_added']
    rows = [dict(NAME='adaptive_hash_rows_added', STATE='disabled'),
            dict(NAME='adaptive_hash_searches', STATE='enabled')]
    assert ahi_advisor.monitors_to_enable(rows, 'STATUS') == ['adaptive_hash_rows_added']


def test_metrics_query_uses_column_and_binds_names():
    sql, args = ahi_advisor.metrics_query('ENABLED')
    assert 'ENABLED AS STATE' in sql and args == list(ahi_advisor.METRIC_COUNTERS)
    with pytest.raises(ValueError):
        ahi_advisor.metrics_query('STATUS; DROP TABLE x')


def test_deltas_ignore_resets_and_garbage():
    assert ahi_advisor.deltas({'a': '10', 'b': 5, 'c': 'x', 'd': 1}, {'a': '25', 'b': 2, 'c': 3}) == {'a': 15, 'b': None}


# ---------------------------------------------------------------- verdicts
HOT = dict(adaptive_hash_searches=990000, adaptive_hash_searches_btree=10000,
           adaptive_hash_rows_added=300, adaptive_hash_rows_removed=0)
READS = dict(innodb_buffer_pool_read_requests=5000000, innodb_buffer_pool_reads=0,
             innodb_rows_read=1000000, innodb_rows_inserted=0, innodb_rows_updated=0, innodb_rows_deleted=0,
             handler_read_key=33000)


def test_hot_set_with_ahi_on_is_keep_on():
    r = ahi_advisor.analyse(HOT, READS, 60, True)
    assert r['recommendation'] == ahi_advisor.KEEP_ON
    assert r['hit_ratio'] == pytest.approx(0.99)
    assert r['maintenance_per_hit'] == pytest.approx(300 / 990000.0, rel=1e-3)
    assert any('99.0%' in x for x in r['reasons'])


def test_low_hit_ratio_is_turn_off_with_reason():
    md = dict(adaptive_hash_searches=10000, adaptive_hash_searches_btree=90000,
              adaptive_hash_rows_added=100, adaptive_hash_rows_removed=100)
    sd = dict(READS, innodb_buffer_pool_reads=200000)
    r = ahi_advisor.analyse(md, sd, 60, True)
    assert r['recommendation'] == ahi_advisor.TURN_OFF
    assert r['hit_ratio'] == pytest.approx(0.1)
    text = ' '.join(r['reasons'])
    assert '10.0%' in text and 'went to disk' in text


def test_churn_is_turn_off_even_with_good_hit_ratio():
    md = dict(adaptive_hash_searches=60000, adaptive_hash_searches_btree=40000,
              adaptive_hash_rows_added=50000, adaptive_hash_rows_removed=45000)
    r = ahi_advisor.analyse(md, READS, 60, True)
    assert r['recommendation'] == ahi_advisor.TURN_OFF
    assert r['maintenance_per_hit'] == pytest.approx(95000 / 60000.0, rel=1e-3)
    assert any('rebuilt faster than it is used' in x for x in r['reasons'])


def test_thresholds_are_options():
    md = dict(adaptive_hash_searches=60000, adaptive_hash_searches_btree=40000,
              adaptive_hash_rows_added=0, adaptive_hash_rows_removed=0)
    assert ahi_advisor.analyse(md, READS, 60, True)['recommendation'] == ahi_advisor.KEEP_ON
    assert ahi_advisor.analyse(md, READS, 60, True, dict(min_hit_ratio=0.7))['recommendation'] == ahi_advisor.TURN_OFF


def test_maintenance_not_measured_is_said():
    r = ahi_advisor.analyse(HOT, READS, 60, True, maintenance_measured=False)
    assert r['recommendation'] == ahi_advisor.KEEP_ON and r['maintenance_per_hit'] is None
    assert any('not measured' in x for x in r['reasons'])


def test_too_few_lookups_is_insufficient():
    md = dict(adaptive_hash_searches=50, adaptive_hash_searches_btree=10)
    r = ahi_advisor.analyse(md, READS, 60, True)
    assert r['recommendation'] == ahi_advisor.INSUFFICIENT
    assert 'at least 10000' in r['reasons'][0]


def test_ahi_off_read_mostly_in_memory_is_try_on():
    # MariaDB with AHI off: B-tree counter frozen at 0, Handler_read_key stands in.
    md = dict(adaptive_hash_searches=0, adaptive_hash_searches_btree=0)
    sd = dict(READS, handler_read_key=400000, innodb_buffer_pool_reads=10)
    r = ahi_advisor.analyse(md, sd, 60, False)
    assert r['recommendation'] == ahi_advisor.TRY_ON
    assert r['counters']['index_lookups'] == 400000
    assert any('Handler_read_key' in x for x in r['reasons'])


def test_ahi_off_disk_bound_stays_off():
    md = dict(adaptive_hash_searches=0, adaptive_hash_searches_btree=500000)
    sd = dict(READS, innodb_buffer_pool_reads=400000)
    r = ahi_advisor.analyse(md, sd, 60, False)
    assert r['recommendation'] == ahi_advisor.TURN_OFF
    assert r['counters']['index_lookups'] == 500000
    assert any('leave the adaptive hash index OFF' in x for x in r['reasons'])


def test_ahi_off_write_heavy_stays_off():
    md = dict(adaptive_hash_searches=0, adaptive_hash_searches_btree=500000)
    sd = dict(READS, innodb_rows_read=100000, innodb_rows_inserted=60000, innodb_rows_updated=60000)
    r = ahi_advisor.analyse(md, sd, 60, False)
    assert r['recommendation'] == ahi_advisor.TURN_OFF
    assert r['write_share'] == pytest.approx(120000 / 220000.0, rel=1e-3)


def test_handler_counters_stand_in_for_innodb_rows_on_mariadb():
    sd = dict(handler_read_key=300000, handler_read_next=1000, handler_write=200000, handler_update=100000,
              innodb_buffer_pool_read_requests=1000000, innodb_buffer_pool_reads=0)
    r = ahi_advisor.analyse({}, sd, 60, False)
    assert r['counters']['rows_source'] == 'Handler_*'
    assert r['write_share'] == pytest.approx(300000 / 601000.0, rel=1e-3)
    assert r['recommendation'] == ahi_advisor.TURN_OFF


def test_status_counters_fill_in_missing_metrics():
    sd = dict(READS, innodb_adaptive_hash_hash_searches=90000, innodb_adaptive_hash_non_hash_searches=10000)
    r = ahi_advisor.analyse({}, sd, 60, True, status_counters=True, maintenance_measured=False)
    assert r['hit_ratio'] == pytest.approx(0.9)
    assert r['recommendation'] == ahi_advisor.KEEP_ON


def test_aurora_reader_is_not_settable_never_try_on():
    identity = ident(flavors.AURORA, (8, 0, 28), aurora_reader=True)
    md = dict(adaptive_hash_searches=0, adaptive_hash_searches_btree=900000)
    r = ahi_advisor.analyse(md, READS, 60, False, settable=flavors.settable('innodb_adaptive_hash_index', identity))
    assert r['recommendation'] == ahi_advisor.NOT_SETTABLE
    assert 'Aurora reader' in r['reasons'][0]
    # The writer of the same cluster is judged normally.
    writer = ident(flavors.AURORA, (8, 0, 28), aurora_reader=False)
    r = ahi_advisor.analyse(md, READS, 60, False, settable=flavors.settable('innodb_adaptive_hash_index', writer))
    assert r['recommendation'] == ahi_advisor.TRY_ON


# ---------------------------------------------------------------- what the role manages
@pytest.mark.parametrize('flavor,version,expected', [
    ('mysql', (8, 0, 33), 'innodb_adaptive_hash_index_parts'),
    ('mysql', (5, 7, 22), 'innodb_adaptive_hash_index_parts'),
    ('mysql', (5, 7, 7), None),
    ('mysql', (5, 6, 51), None),
    ('percona', (5, 6, 40), 'innodb_adaptive_hash_index_partitions'),
    ('percona', (5, 5, 60), 'innodb_adaptive_hash_index_partitions'),
    ('percona', (8, 0, 36), 'innodb_adaptive_hash_index_parts'),
    ('mariadb', (10, 11, 6), 'innodb_adaptive_hash_index_parts'),
    ('mariadb', (10, 1, 48), None),
])
def test_partition_variable_per_flavor(flavor, version, expected):
    assert capability_facts.capabilities(flavor, version)['ahi_partition_variable'] == expected
    assert capability_facts.ahi_partition_variable(flavor, version) == expected


def test_advice_table_one_line_per_host_in_order():
    from ansible_collections.dbfleet.innodb.plugins.filter.ahi_advisor_table import FilterModule
    results = {
        'mysql80': dict(server=dict(flavor='mysql', version_text='8.0.33'), ahi_enabled=True,
                        advice=dict(recommendation='keep_on', hit_ratio=0.91234, maintenance_per_hit=0.01,
                                    buffer_pool_miss_ratio=None)),
        'mariadb1011': dict(server=dict(flavor='mariadb', version_text='10.11.19'), ahi_enabled=False,
                            advice=dict(recommendation='insufficient_data')),
    }
    lines = FilterModule().filters()['ahi_advisor_table'](results, ['mysql80', 'mariadb1011', 'gone'])
    assert lines == [
        'host         flavor   version  AHI recommendation       hit maint/hit bp_miss',
        'mysql80      mysql    8.0.33   ON  keep_on            0.912    0.0100       -',
        'mariadb1011  mariadb  10.11.19 OFF insufficient_data      -         -       -',
        'gone         ?        ?        ?   failed                 -         -       -',
    ]


# ---------------------------------------------------------------- analyse()'s steps, each on its own
TH = dict(ahi_advisor.DEFAULT_THRESHOLDS)


def test_step_counters_fill_from_status_and_handlers():
    c = ahi_advisor._sample_counters(  # pylint: disable=protected-access
        {}, dict(innodb_adaptive_hash_hash_searches=7, innodb_adaptive_hash_non_hash_searches=3,
                 handler_read_key=40, handler_write=5), True)
    assert (c['hash_searches'], c['btree_searches'], c['rows_source']) == (7, 3, 'Handler_*')
    assert (c['rows_read'], c['rows_changed'], c['handler_read_key']) == (40, 5, 40)
    assert ahi_advisor._sample_counters({}, dict(innodb_adaptive_hash_hash_searches=7), False)['hash_searches'] is None  # pylint: disable=protected-access
    c = ahi_advisor._sample_counters({}, dict(innodb_rows_read=90, innodb_rows_updated=10), False)  # pylint: disable=protected-access
    assert (c['rows_read'], c['rows_changed'], c['rows_source']) == (90, 10, 'Innodb_rows_*')


def test_step_figures_ratios_and_the_lookups_that_stand_in():
    c = ahi_advisor._sample_counters(HOT, dict(READS, innodb_rows_read=90, innodb_rows_updated=10), False)  # pylint: disable=protected-access
    f = ahi_advisor._sample_figures(c, True, True)  # pylint: disable=protected-access
    assert f['searches'] == 1000000 and f['hit_ratio'] == 0.99 and f['write_share'] == 0.1 and f['miss_ratio'] == 0.0
    off = ahi_advisor._sample_figures(dict(c, hash_searches=0, btree_searches=0, handler_read_key=500), False, True)  # pylint: disable=protected-access
    assert (off['hit_ratio'], off['maintenance_per_hit'], off['lookups']) == (None, None, 500)
    assert off['lookups_source'] == 'Handler_read_key (index lookups)'


def test_step_precondition_refuses_what_cannot_be_judged():
    reasons = []
    f = dict(lookups=10, lookups_source='x')
    assert ahi_advisor._precondition(f, TH, reasons, 60.0, False, (False, 'Aurora readers')) == ahi_advisor.NOT_SETTABLE  # pylint: disable=protected-access
    assert reasons[0] == 'Aurora readers'
    assert ahi_advisor._precondition(f, TH, [], 60.0, True, (True, '')) == ahi_advisor.INSUFFICIENT  # pylint: disable=protected-access
    assert ahi_advisor._precondition(dict(f, lookups=TH['min_lookups']), TH, [], 60.0, True, (True, '')) is None  # pylint: disable=protected-access


def test_step_judges_on_and_off():
    c = dict(hash_searches=100)
    on = dict(searches=1000, hit_ratio=0.1, maintenance=0, maintenance_per_hit=0.0, miss_ratio=0.0)
    reasons = []
    assert ahi_advisor._judge_on(c, on, TH, reasons) == ahi_advisor.TURN_OFF and 'only 10.0% of 1000' in reasons[0]  # pylint: disable=protected-access
    assert ahi_advisor._judge_on(c, dict(on, hit_ratio=None), TH, []) == ahi_advisor.INSUFFICIENT  # pylint: disable=protected-access
    off = dict(lookups=100000, lookups_source='x', miss_ratio=0.0, write_share=0.01)
    reasons = []
    assert ahi_advisor._judge_off(off, TH, reasons, 60.0, 1666.7) == ahi_advisor.TRY_ON and 'try it ON' in reasons[-1]  # pylint: disable=protected-access
    assert ahi_advisor._judge_off(dict(off, miss_ratio=None), TH, [], 60.0, 1.0) == ahi_advisor.INSUFFICIENT  # pylint: disable=protected-access
    reasons = []
    assert ahi_advisor._judge_off(dict(off, write_share=0.9), TH, reasons, 60.0, 1.0) == ahi_advisor.TURN_OFF  # pylint: disable=protected-access
    assert reasons[-1] == 'leave the adaptive hash index OFF'


def test_advise_a_sample_and_a_setting_that_changed_during_it():
    sample = dict(ahi_before=True, ahi_after=True, elapsed=60.0, maintenance_measured=True, search_off=[],
                  counts_before=dict.fromkeys(HOT, 0), counts_after=HOT, status_before=dict.fromkeys(READS, 0),
                  status_after=READS)
    assert ahi_advisor.advise(sample, {}, (True, ''), False)['recommendation'] == ahi_advisor.KEEP_ON
    changed = ahi_advisor.advise(dict(sample, ahi_after=False), {}, (True, ''), False)
    assert changed['recommendation'] == ahi_advisor.INSUFFICIENT
    assert changed['reasons'] == ['innodb_adaptive_hash_index changed during the sample (True -> False): sample again']
    blind = ahi_advisor.advise(dict(sample, search_off=['adaptive_hash_searches']), {}, (True, ''), False)
    assert blind['recommendation'] == ahi_advisor.INSUFFICIENT and blind['counters']['hash_searches'] is None
