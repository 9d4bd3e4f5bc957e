# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Off-peak window logic: midnight wrap, clock changes, zones, malformed input."""

from __future__ import annotations


import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import (
    WindowError, in_window, parse_window, status)


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize('text, start, end', [
    ('02:00-05:00', 120, 300),
    ('2:00-5:30', 120, 330),
    (' 22:30 - 01:30 ', 1350, 90),
    ('00:00-24:00'.replace('24:00', '23:59'), 0, 1439),
    ('23:00-24:00', 1380, 1440),
])
def test_parse_ok(text, start, end):
    w = parse_window(text)
    assert (w.start, w.end) == (start, end)


@pytest.mark.parametrize('text, words', [
    ('25:00-03:00', 'start 25:00'),
    ('02:60-03:00', 'start 02:60'),
    ('02:00-24:30', 'end 24:30'),
    ('02:00', 'HH:MM-HH:MM'),
    ('02:00-02:00', 'empty'),
    ('00:00-24:00', 'empty'),
    ('abc', 'HH:MM-HH:MM'),
    ('', 'HH:MM-HH:MM'),
    ('02:00-05:00; DROP TABLE x', 'HH:MM-HH:MM'),
    (None, 'not a string'),
    (200, 'not a string'),
])
def test_parse_malformed(text, words):
    with pytest.raises(WindowError) as e:
        parse_window(text)
    assert words in str(e.value)
    assert repr(text) in str(e.value)


# ------------------------------------------------------------------ plain windows
def test_inside_simple_utc():
    st = status('02:00-05:00', 'UTC', '2024-01-10T03:00:00+00:00')
    assert st['inside'] is True
    assert st['opens_at'] == '2024-01-10T02:00:00+00:00'
    assert st['closes_at'] == '2024-01-10T05:00:00+00:00'
    assert st['seconds_until_open'] == 0
    assert st['seconds_until_close'] == 7200
    assert 'closes at 2024-01-10T05:00:00+00:00 (in 2h00m)' in st['message']


def test_edges_start_inclusive_end_exclusive():
    assert in_window('02:00-05:00', 'UTC', '2024-01-10T02:00:00+00:00') is True
    assert in_window('02:00-05:00', 'UTC', '2024-01-10T04:59:59+00:00') is True
    assert in_window('02:00-05:00', 'UTC', '2024-01-10T05:00:00+00:00') is False
    assert in_window('02:00-05:00', 'UTC', '2024-01-10T01:59:59+00:00') is False


def test_outside_says_when_next_window_opens():
    st = status('02:00-05:00', 'UTC', '2024-01-10T12:30:15+00:00')
    assert st['inside'] is False
    assert st['opens_at'] == '2024-01-11T02:00:00+00:00'
    assert st['closes_at'] == '2024-01-11T05:00:00+00:00'
    assert st['seconds_until_open'] == 13 * 3600 + 29 * 60 + 45
    assert st['message'].startswith('outside the window 02:00-05:00 (UTC)')
    assert 'next window opens at 2024-01-11T02:00:00+00:00 (in 13h29m)' in st['message']


def test_outside_same_day_before_window():
    st = status('02:00-05:00', 'UTC', '2024-01-10T01:00:00+00:00')
    assert st['opens_at'] == '2024-01-10T02:00:00+00:00'
    assert st['seconds_until_open'] == 3600


# ------------------------------------------------------------------ midnight wrap
@pytest.mark.parametrize('now, inside', [
    ('2024-01-10T22:29:00+00:00', False),
    ('2024-01-10T22:30:00+00:00', True),
    ('2024-01-10T23:59:59+00:00', True),
    ('2024-01-11T00:00:00+00:00', True),
    ('2024-01-11T01:29:59+00:00', True),
    ('2024-01-11T01:30:00+00:00', False),
    ('2024-01-11T12:00:00+00:00', False),
])
def test_midnight_wrap(now, inside):
    assert in_window('22:30-01:30', 'UTC', now) is inside


def test_midnight_wrap_open_and_close_span_two_dates():
    st = status('22:30-01:30', 'UTC', '2024-01-11T00:15:00+00:00')
    assert st['opens_at'] == '2024-01-10T22:30:00+00:00'
    assert st['closes_at'] == '2024-01-11T01:30:00+00:00'
    st = status('22:30-01:30', 'UTC', '2024-01-11T02:00:00+00:00')
    assert st['opens_at'] == '2024-01-11T22:30:00+00:00'
    assert st['closes_at'] == '2024-01-12T01:30:00+00:00'


def test_end_2400():
    assert in_window('23:00-24:00', 'UTC', '2024-01-10T23:59:00+00:00') is True
    assert in_window('23:00-24:00', 'UTC', '2024-01-11T00:00:00+00:00') is False


# ------------------------------------------------------------------ time zones
def test_named_zone_is_used():
    # 01:00 UTC in January is 02:00 in Berlin (CET, +01:00) and 20:00 in New York (EST).
    now = '2024-01-10T01:00:00+00:00'
    assert in_window('02:00-05:00', 'Europe/Berlin', now) is True
    assert in_window('02:00-05:00', 'UTC', now) is False
    assert in_window('02:00-05:00', 'America/New_York', now) is False
    st = status('02:00-05:00', 'America/New_York', now)
    assert st['opens_at'] == '2024-01-10T02:00:00-05:00'
    assert st['now'] == '2024-01-09T20:00:00-05:00'


def test_now_given_in_other_offset_is_the_same_instant():
    assert in_window('02:00-05:00', 'Asia/Tokyo', '2024-01-09T18:30:00+01:00') is True  # 02:30 JST


@pytest.mark.parametrize('zone', ['Mars/Olympus', '', '../../etc/passwd', 'Europe/Berlin; rm', None])
def test_unknown_zone(zone):
    with pytest.raises(WindowError) as e:
        status('02:00-05:00', zone, '2024-01-10T01:00:00+00:00')
    assert 'time zone' in str(e.value)


@pytest.mark.parametrize('now', ['yesterday', '2024-01-10T01:00:00', '2024-13-10T01:00:00+00:00'])
def test_bad_now(now):
    with pytest.raises(WindowError):
        status('02:00-05:00', 'UTC', now)


def test_now_defaults_to_current_time():
    st = status('00:00-23:59', 'UTC')
    assert st['inside'] in (True, False)
    assert st['seconds_until_close'] > 0


# ------------------------------------------------------------------ clock changes
def test_berlin_spring_forward_window_opens_at_first_existing_minute():
    # 2024-03-31: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
    st = status('02:00-05:00', 'Europe/Berlin', '2024-03-31T00:30:00+00:00')  # 01:30 CET
    assert st['inside'] is False
    assert st['opens_at'] == '2024-03-31T03:00:00+02:00'
    assert st['closes_at'] == '2024-03-31T05:00:00+02:00'
    assert st['seconds_until_open'] == 30 * 60
    # the window lasts 2 hours that night
    assert in_window('02:00-05:00', 'Europe/Berlin', '2024-03-31T01:00:00+00:00') is True


def test_berlin_spring_forward_window_in_skipped_hour_is_skipped():
    st = status('02:15-02:45', 'Europe/Berlin', '2024-03-31T00:30:00+00:00')
    assert st['inside'] is False
    assert st['opens_at'] == '2024-04-01T02:15:00+02:00'
    assert st['closes_at'] == '2024-04-01T02:45:00+02:00'


def test_berlin_fall_back_window_lasts_an_hour_longer():
    # 2024-10-27: 03:00 CEST goes back to 02:00 CET (01:00 UTC).
    st = status('02:00-03:00', 'Europe/Berlin', '2024-10-27T00:10:00+00:00')  # 02:10 CEST
    assert st['inside'] is True
    assert st['opens_at'] == '2024-10-27T02:00:00+02:00'
    assert st['closes_at'] == '2024-10-27T03:00:00+01:00'
    assert st['seconds_until_close'] == 110 * 60
    # second pass through 02:xx (CET) is inside too
    assert in_window('02:00-03:00', 'Europe/Berlin', '2024-10-27T01:30:00+00:00') is True
    assert in_window('02:00-03:00', 'Europe/Berlin', '2024-10-27T02:00:00+00:00') is False


def test_new_york_spring_forward_and_fall_back():
    # 2024-03-10 02:00 EST -> 03:00 EDT (07:00 UTC)
    st = status('01:30-02:30', 'America/New_York', '2024-03-10T06:00:00+00:00')  # 01:00 EST
    assert st['opens_at'] == '2024-03-10T01:30:00-05:00'
    assert st['closes_at'] == '2024-03-10T03:00:00-04:00'  # 02:30 never exists: closes at the jump
    # 2024-11-03 02:00 EDT -> 01:00 EST (06:00 UTC): 01:30 happens twice
    st = status('01:00-02:00', 'America/New_York', '2024-11-03T04:30:00+00:00')  # 00:30 EDT
    assert st['opens_at'] == '2024-11-03T01:00:00-04:00'
    assert st['closes_at'] == '2024-11-03T02:00:00-05:00'
    assert st['seconds_until_open'] == 30 * 60


def test_wrap_across_a_clock_change():
    # 23:00-04:00 in Berlin across the spring-forward night: 5 wall hours, 4 real hours.
    st = status('23:00-04:00', 'Europe/Berlin', '2024-03-30T21:00:00+00:00')  # 22:00 CET
    assert st['opens_at'] == '2024-03-30T23:00:00+01:00'
    assert st['closes_at'] == '2024-03-31T04:00:00+02:00'
    assert st['seconds_until_close'] - st['seconds_until_open'] == 4 * 3600


def test_half_hour_zone():
    st = status('02:00-05:00', 'Asia/Kolkata', '2024-01-10T20:00:00+00:00')  # 01:30 IST
    assert st['opens_at'] == '2024-01-11T02:00:00+05:30'
    assert st['seconds_until_open'] == 1800
