"""Time windows as the drop and convert playbooks take them (HH:00-HH:00, UTC)."""
import datetime


def window_around_now(inside=True):
    """A window around now (an hour ago to two hours from now), or with inside=False one that opens in three hours."""
    now = datetime.datetime.now(datetime.timezone.utc)
    if inside:
        start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(hours=2)
    else:
        start, end = now + datetime.timedelta(hours=3), now + datetime.timedelta(hours=5)
    return '%02d:00-%02d:00' % (start.hour, end.hour)
