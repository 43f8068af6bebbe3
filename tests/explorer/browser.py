"""browser.py — Debian's Chromium, headless, driven through the DevTools protocol over a pipe.

Chromium's --remote-debugging-pipe speaks the DevTools protocol on file descriptors 3 (its
input) and 4 (its output): JSON messages, each ended by a NUL byte. That needs no WebSocket
client and no npm package, only the standard library. One page is opened and attached
(Target.createTarget, Target.attachToTarget with flatten), and every command after goes to it.

    with Browser() as b:
        b.open("http://127.0.0.1:8000/")
        value = b.evaluate("1 + 1")        # awaits promises, returns the value as JSON
        b.screenshot("view.png", "#view-read")
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, width=1280, height=900, binary=None):
        self.binary = binary or shutil.which("chromium") or "/usr/bin/chromium"
        self.width, self.height = width, height
        self.next_id = 0
        self.buffer = b""
        self.session = None

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="poslab-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4: in the child, both pipe ends are first copied
        # above any fd they could collide with, then onto 3 and 4 (which pass_fds keeps open).
        def child_fds():
            r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)
        args = [self.binary, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--hide-scrollbars", "--mute-audio",
                "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (self.width, self.height), "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=child_fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.profile, "stderr.log"), "wb"))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self.inp = os.fdopen(from_chrome_r, "rb", buffering=0)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise BrowserError("no answer from Chromium in time")
            chunk = self.inp.read(1 << 16)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=120):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def open(self, url, timeout=60):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1,
                   "mobile": False})
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", {"url": url})
        deadline = time.time() + timeout
        while self.evaluate("document.readyState", timeout=timeout) != "complete":
            if time.time() > deadline:
                raise BrowserError(url + ": did not finish loading")
            time.sleep(0.1)

    def evaluate(self, expression, timeout=300):
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                           "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise BrowserError("page: " + str(text))
        return r["result"].get("value")

    def screenshot(self, path, selector):
        """A PNG of the element `selector`, scrolled into view, its whole height."""
        box = self.evaluate(
            "(() => { const e = document.querySelector(%s); e.scrollIntoView(); "
            "const r = e.getBoundingClientRect(); "
            "return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
            % json.dumps(selector))
        x, y, w, h = box
        shot = self.call("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True,
                          "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
