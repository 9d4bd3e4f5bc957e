# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Off-peak windows such as '02:00-05:00' in a named time zone.

A window is wall-clock time in its zone: '22:30-01:30' crosses midnight, and on the
nights the clocks change the window follows the wall clock. When the clocks spring
forward through the window's start the window opens at the first wall-clock minute
that exists (Europe/Berlin, '02:00-05:00' on the last Sunday of March opens at 03:00
CEST); a window that lies entirely in the skipped hour does not happen that night.
When the clocks fall back, a window covering the repeated hour lasts an hour longer.

Window edges are whole minutes and real time-zone transitions happen on whole minutes,
so the next opening is found by testing minute boundaries: simple and exact.

Used by the module dbfleet.innodb.drop_tables and by the filter/test plugins
dbfleet.innodb.next_window and dbfleet.innodb.in_window.
"""

from __future__ import annotations

import datetime
import re

UTC = datetime.timezone.utc
_WINDOW_RE = re.compile(r'^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$')
_MINUTE = datetime.timedelta(minutes=1)
# Longest search for the next opening: a window skipped on a spring-forward night
# opens the next evening at the latest.
_SEARCH_MINUTES = 3 * 24 * 60


class WindowError(ValueError):
    """A malformed window or time zone; the message names the bad input."""


class Window(object):
    """A parsed window: start and end as minutes after local midnight (end may be 1440)."""

    def __init__(self, text, start, end):
        self.text = text
        self.start = start
        self.end = end

    @property
    def crosses_midnight(self):
        return self.end < self.start

    @property
    def minutes(self):
        """Nominal length in minutes (clock changes aside)."""
        return (self.end - self.start) % 1440 or 1440

    def contains_minute(self, minute_of_day):
        if self.start < self.end:
            return self.start <= minute_of_day < self.end
        return minute_of_day >= self.start or minute_of_day < self.end

    def __repr__(self):
        return 'Window(%r)' % (self.text,)


def parse_window(text):
    """Window from 'HH:MM-HH:MM'. Raises WindowError naming what is wrong."""
    if not isinstance(text, str):
        raise WindowError('window %r is not a string like "02:00-05:00"' % (text,))
    m = _WINDOW_RE.match(text)
    if not m:
        raise WindowError('window %r is not of the form HH:MM-HH:MM (e.g. "02:00-05:00")' % (text,))
    sh, sm, eh, em = (int(x) for x in m.groups())
    if sh > 23 or sm > 59:
        raise WindowError('window %r: start %02d:%02d is not a time of day' % (text, sh, sm))
    if em > 59 or eh > 24 or (eh == 24 and em != 0):
        raise WindowError('window %r: end %02d:%02d is not a time of day (24:00 is allowed)' % (text, eh, em))
    start = sh * 60 + sm
    end = eh * 60 + em
    if end % 1440 == start:
        raise WindowError('window %r is empty: start and end are the same time' % (text,))
    return Window(text.strip(), start, end)


def _zoneinfo():
    """(ZoneInfo, ZoneInfoNotFoundError), or (None, Exception) without zoneinfo. Imported on first use: a module that
    only reads times (verify's parse_now) does not load the time zone machinery (zoneinfo reads sysconfig)."""
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    except ImportError:  # pragma: no cover - Python 3.8
        try:
            from backports.zoneinfo import ZoneInfo, ZoneInfoNotFoundError
        except ImportError:
            return None, Exception
    return ZoneInfo, ZoneInfoNotFoundError


def get_zone(name):
    """ZoneInfo for an IANA name such as 'Europe/Berlin' or 'UTC'. Raises WindowError."""
    zone_info, not_found = _zoneinfo()
    if zone_info is None:
        raise WindowError('time zones need Python 3.9+ (zoneinfo) or backports.zoneinfo')
    if not isinstance(name, str) or not name.strip():
        raise WindowError('time zone %r is not an IANA name such as "Europe/Berlin"' % (name,))
    try:
        return zone_info(name.strip())
    except (not_found, ValueError, OSError) as e:
        raise WindowError('time zone %r is unknown (%s); use an IANA name such as "Europe/Berlin"'
                          % (name, e.__class__.__name__))


def parse_now(now):
    """An aware UTC datetime from None (the current time), an aware datetime or an ISO 8601 text."""
    if now is None:
        return datetime.datetime.now(UTC)
    if isinstance(now, str):
        text = now.strip()
        if text.endswith('Z'):
            text = text[:-1] + '+00:00'
        try:
            now = datetime.datetime.fromisoformat(text)
        except ValueError:
            raise WindowError('time %r is not ISO 8601 (e.g. "2024-03-31T01:30:00+01:00")' % (now,))
    if not isinstance(now, datetime.datetime):
        raise WindowError('time %r is not a datetime' % (now,))
    if now.tzinfo is None or now.utcoffset() is None:
        raise WindowError('time %r has no UTC offset; give one (e.g. "+00:00")' % (now.isoformat(),))
    return now.astimezone(UTC)


def _inside(window, zone, instant_utc):
    local = instant_utc.astimezone(zone)
    return window.contains_minute(local.hour * 60 + local.minute)


def _floor_minute(instant):
    return instant.replace(second=0, microsecond=0)


def _ceil_minute(instant):
    floor = _floor_minute(instant)
    return floor if floor == instant else floor + _MINUTE


def status(window, timezone, now=None):
    """Where now stands relative to the window.

    Returns a dict: inside (bool), window, timezone, now, opens_at, closes_at (ISO 8601 in the
    window's zone), seconds_until_open (0 when inside), seconds_until_close, message.
    opens_at/closes_at describe the current window when inside, else the next one.
    """
    win = window if isinstance(window, Window) else parse_window(window)
    zone = get_zone(timezone)
    now_utc = parse_now(now)
    inside = _inside(win, zone, now_utc)
    if inside:
        # Walk back to the minute the current window opened.
        opens = _floor_minute(now_utc)
        for dummy in range(_SEARCH_MINUTES):
            if not _inside(win, zone, opens - _MINUTE):
                break
            opens -= _MINUTE
        search_from = _floor_minute(now_utc) + _MINUTE
    else:
        opens = None
        probe = _ceil_minute(now_utc)
        for dummy in range(_SEARCH_MINUTES):
            if _inside(win, zone, probe):
                opens = probe
                break
            probe += _MINUTE
        if opens is None:  # pragma: no cover - cannot happen for a non-empty window
            raise WindowError('window %r never opens in %s' % (win.text, timezone))
        search_from = opens + _MINUTE
    closes = search_from
    for dummy in range(_SEARCH_MINUTES):
        if not _inside(win, zone, closes):
            break
        closes += _MINUTE
    local_now = now_utc.astimezone(zone)
    result = dict(
        inside=inside,
        window=win.text,
        timezone=str(timezone).strip(),
        now=local_now.isoformat(),
        opens_at=opens.astimezone(zone).isoformat(),
        closes_at=closes.astimezone(zone).isoformat(),
        seconds_until_open=0 if inside else int((opens - now_utc).total_seconds()),
        seconds_until_close=int((closes - now_utc).total_seconds()),
    )
    result['message'] = describe(result)
    return result


def _duration(seconds):
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if hours:
        return '%dh%02dm' % (hours, minutes)
    if minutes:
        return '%dm' % minutes
    return '%ds' % seconds


def describe(st):
    if st['inside']:
        return ('inside the window %s (%s): it is %s; the window closes at %s (in %s)'
                % (st['window'], st['timezone'], st['now'], st['closes_at'],
                   _duration(st['seconds_until_close'])))
    return ('outside the window %s (%s): it is %s; the next window opens at %s (in %s)'
            % (st['window'], st['timezone'], st['now'], st['opens_at'],
               _duration(st['seconds_until_open'])))


def in_window(window, timezone, now=None):
    return status(window, timezone, now)['inside']
