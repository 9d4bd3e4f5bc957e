"""A report page in a real browser: headless Chromium through chromedriver (W3C WebDriver over HTTP, spoken with urllib).
The ``browser`` fixture (local/playbooks/conftest.py) is headless_chromium()."""
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
CHROMEDRIVER = shutil.which('chromedriver') or '/usr/bin/chromedriver'


def free_port():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class WebDriver(object):
    """The few W3C WebDriver commands the test needs, over HTTP with urllib."""

    def __init__(self, port):
        self.base = 'http://127.0.0.1:%d' % port
        self.session = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read().decode())['value']

    def start(self, user_data_dir):
        args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--user-data-dir=%s' % user_data_dir]
        caps = {'capabilities': {'alwaysMatch': {'browserName': 'chrome', 'goog:chromeOptions': {
            'binary': CHROMIUM, 'args': args}}}}
        self.session = self.call('POST', '/session', caps)['sessionId']

    def s(self, path):
        return '/session/%s%s' % (self.session, path)

    def get(self, url):
        self.call('POST', self.s('/url'), {'url': url})

    def find(self, css):
        found = self.call('POST', self.s('/element'), {'using': 'css selector', 'value': css})
        return list(found.values())[0]

    def find_all(self, css):
        found = self.call('POST', self.s('/elements'), {'using': 'css selector', 'value': css})
        return [list(f.values())[0] for f in found]

    def text(self, element):
        return self.call('GET', self.s('/element/%s/text' % element))

    def attr(self, element, name):
        return self.call('GET', self.s('/element/%s/attribute/%s' % (element, name)))

    def click(self, element):
        self.call('POST', self.s('/element/%s/click' % element), {})

    def script(self, source):
        return self.call('POST', self.s('/execute/sync'), {'script': source, 'args': []})

    def quit(self):
        if self.session:
            self.call('DELETE', '/session/%s' % self.session)


def headless_chromium(tmp_path):
    """A WebDriver session of headless Chromium (its profile under tmp_path), ended afterwards."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail('chromium / chromedriver (Debian packages chromium, chromium-driver) not installed: run `make deps`',
                    pytrace=False)
    port = free_port()
    proc = subprocess.Popen([CHROMEDRIVER, '--port=%d' % port], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    driver = WebDriver(port)
    try:
        for dummy in range(100):
            try:
                driver.call('GET', '/status')
                break
            except OSError:
                time.sleep(0.1)
        driver.start(str(tmp_path / 'chrome'))
        yield driver
    finally:
        try:
            driver.quit()
        except OSError:
            pass
        proc.terminate()
        proc.wait(timeout=20)
