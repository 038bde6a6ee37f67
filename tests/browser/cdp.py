"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe, and a PNG reader.

Standard library only (CI has no PyPI). Chromium reads NUL-terminated JSON messages on
fd 3 and writes its own on fd 4. One browser process serves every page: each page is a
target of its own with a flattened session (the session id travels in each message).
"""
import ctypes
import fcntl
import json
import os
import signal
import struct
import subprocess
import threading
import time
import zlib

LAUNCH_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
    "--no-default-browser-check", "--remote-debugging-pipe",
]


class CdpError(Exception):
    pass


class Browser:
    """One headless Chromium. Use as a context manager: the process group is killed on exit."""

    def __init__(self, executable, profile_dir, log_path):
        to_read, self._to_browser = os.pipe()
        self._from_browser, from_write = os.pipe()
        # Lift the child's ends above 4 so the dup2 onto 3 and 4 below cannot clobber one
        # with the other, whatever numbers os.pipe() returned.
        child_in = fcntl.fcntl(to_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_read)
        os.close(from_write)

        def child_setup():
            # fd 3 and 4 as Chromium expects them (dup2 makes them inheritable). pass_fds
            # cannot be used for this: subprocess closes every fd not listed *after*
            # preexec_fn, and the numbers 3/4 need not exist in this process.
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)
            try:  # the browser dies with us, even when we are SIGKILLed (CTest timeout)
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            except Exception:
                pass

        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [executable, *LAUNCH_FLAGS, "--user-data-dir=" + profile_dir, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            close_fds=False, preexec_fn=child_setup, start_new_session=True)
        os.close(child_in)
        os.close(child_out)
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self._next_id = 0
        self._responses = {}
        self.events = []  # (sessionId, method, params), in arrival order
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- plumbing ---------------------------------------------------------------------
    def _read_loop(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while True:
                end = buf.find(b"\0")
                if end < 0:
                    break
                msg, buf = json.loads(buf[:end]), buf[end + 1:]
                self._dispatch(msg)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _dispatch(self, msg):
        if "id" in msg:
            with self._cond:
                self._responses[msg["id"]] = msg
                self._cond.notify_all()
            return
        session, method, params = msg.get("sessionId"), msg.get("method"), msg.get("params", {})
        if method == "Page.javascriptDialogOpening":
            # A dialog blocks the page (and every later evaluate): dismiss it at once.
            self._post("Page.handleJavaScriptDialog", {"accept": False}, session)
        with self._cond:
            self.events.append((session, method, params))
            self._cond.notify_all()

    def _post(self, method, params, session):
        with self._write_lock:
            self._next_id += 1
            mid = self._next_id
            msg = {"id": mid, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            data = json.dumps(msg).encode() + b"\0"
            try:
                while data:
                    data = data[os.write(self._to_browser, data):]
            except OSError as e:
                raise CdpError(f"{method}: browser pipe closed ({e})")
        return mid

    def send(self, method, params=None, session=None, timeout=20.0):
        mid = self._post(method, params, session)
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._responses:
                left = deadline - time.monotonic()
                if self._closed:
                    raise CdpError(f"{method}: the browser exited (rc {self.proc.poll()})")
                if left <= 0:
                    raise CdpError(f"{method}: no answer within {timeout:.0f} s")
                self._cond.wait(left)
            msg = self._responses.pop(mid)
        if "error" in msg:
            raise CdpError(f"{method}: {msg['error'].get('message')} {msg['error'].get('data', '')}".strip())
        return msg.get("result", {})

    def wait_event(self, session, method, since, timeout):
        """Index of the first `method` event of `session` at or after index `since`, or None."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in range(since, len(self.events)):
                    if self.events[i][0] == session and self.events[i][1] == method:
                        return i
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._cond.wait(left)

    def session_events(self, session, since=0):
        with self._cond:
            return [(m, p) for s, m, p in self.events[since:] if s == session]

    def event_count(self):
        with self._cond:
            return len(self.events)

    # -- lifetime ---------------------------------------------------------------------
    def close(self):
        try:
            if self.proc.poll() is None:
                self.send("Browser.close", timeout=3)
                self.proc.wait(timeout=3)
        except Exception:
            pass
        finally:
            try:  # Chromium's helpers (zygote, renderers) share its process group
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for fd in (self._to_browser, self._from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- PNG ------------------------------------------------------------------------------
def decode_png(data):
    """(width, height, channels, rows): rows are bytes of 8-bit RGB or RGBA pixels."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 0xFF
        elif f == 2:
            for i in range(stride):
                cur[i] = (cur[i] + prev[i]) & 0xFF
        elif f == 3:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif f != 0:
            raise ValueError(f"bad PNG filter {f} in row {y}")
        rows.append(bytes(cur))
        prev = cur
    return width, height, bpp, rows


def pixel_variety(png):
    """(distinct colours, share of pixels that differ from the most common colour)."""
    width, height, bpp, rows = decode_png(png)
    counts = {}
    for row in rows:
        for x in range(0, width * bpp, bpp):
            px = row[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    top = max(counts.values())
    return len(counts), 1.0 - top / float(width * height)
