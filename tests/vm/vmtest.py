#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Boot one guest under QEMU TCG, run guest scenarios, and check on the host.

The guest reports TAP-like lines on its second serial port ("ok - ...",
"not ok - ...", "# ...", "@mark ..."). The host timestamps every line and
every QMP SUSPEND/WAKEUP event, because the guest under-reports time asleep,
and adds its own checks: no suspend between "@mark hold-start" and
"@mark hold-end", and how soon after "@mark release" the guest went down.
"""

import argparse
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Qmp:
    def __init__(self, path, deadline):
        self.sock = None
        while time.monotonic() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                self.sock = s
                break
            except OSError:
                time.sleep(0.05)
        if not self.sock:
            raise RuntimeError("cannot connect to QMP socket " + path)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.events = []
        self.lock = threading.Lock()
        self._read()  # greeting
        self.command("qmp_capabilities")
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _read(self):
        line = self.file.readline()
        if not line:
            return None
        return json.loads(line)

    def command(self, name):
        self.file.write(json.dumps({"execute": name}).encode() + b"\n")

    def _pump(self):
        while True:
            try:
                msg = self._read()
            except (OSError, ValueError):
                return
            if msg is None:
                return
            if "event" in msg:
                with self.lock:
                    self.events.append((time.monotonic(), msg["event"]))

    def snapshot(self):
        with self.lock:
            return list(self.events)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", default=None, help="initramfs for a modular kernel (a packaged one)")
    ap.add_argument("--image", required=True)
    ap.add_argument("--scenarios", required=True, help="comma-separated guest scenarios")
    ap.add_argument("--expect", required=True, choices=["autosleep", "control", "knob", "stock"])
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the whole boot")
    ap.add_argument("--label", default="vm")
    ap.add_argument("--log-dir", default=None)
    ap.add_argument("--release-limit", type=float, default=3.0,
                    help="max seconds from lock release to suspend (1 s + autosleepd's DelaySec)")
    ap.add_argument("--idle-timeout", type=float, default=10.0,
                    help="autosleepd's IdleTimeoutSec in the guest, for 'idle-timed' marks")
    ap.add_argument("--resume-grace", type=float, default=4.0,
                    help="autosleepd's ResumeGraceSec in the guest, for 'grace-timed' marks")
    ap.add_argument("--lock-timeout", type=float, default=2.0,
                    help="autosleepd's LockTimeoutSec in the guest, for 'release-locktimeout' marks")
    ap.add_argument("--stuck-wakeup", type=float, default=40.0,
                    help="wake a guest suspended this long with QMP system_wakeup (safety net)")
    ap.add_argument("--race-iterations", type=int, default=100,
                    help="acquires in the pm-test-race scenario")
    ap.add_argument("--soak-cycles", type=int, default=50,
                    help="cycles of the soak scenario on the autosleep kernel")
    ap.add_argument("--counts", default=None, help="append 'passed failed' to this file")
    ap.add_argument("--live", action="store_true", help="print guest lines as they come")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="autosleep-vm.")
    log_dir = args.log_dir or work
    os.makedirs(log_dir, exist_ok=True)
    console = os.path.join(log_dir, args.label + "-console.log")
    results = os.path.join(work, "results.log")
    qmp_path = os.path.join(work, "qmp.sock")
    open(results, "w").close()

    cmdline = ("root=/dev/vda rw console=ttyS0 mem_sleep_default=deep loglevel=4 "
               "systemd.show_status=0 autosleep.scenarios=%s autosleep.expect=%s autosleep.cycles=%d "
               "autosleep.race_iterations=%d autosleep.soak_cycles=%d"
               % (args.scenarios, args.expect, args.cycles, args.race_iterations, args.soak_cycles))
    qemu = [
        "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "1",
        "-machine", "pc", "-global", "PIIX4_PM.disable_s3=0",
        "-kernel", args.kernel, "-append", cmdline,
        "-drive", "file=%s,if=virtio,format=raw,snapshot=on" % args.image,
        "-device", "virtio-rng-pci",
        "-serial", "file:" + console, "-serial", "file:" + results,
        # ttyS2: the laptop scenario's autologin getty, which only needs a tty to exist.
        "-serial", "null",
        "-qmp", "unix:%s,server=on,wait=off" % qmp_path,
        "-nic", "none", "-display", "none", "-no-reboot",
    ]
    if args.initrd:
        qemu[qemu.index("-append"):qemu.index("-append")] = ["-initrd", args.initrd]
    start = time.monotonic()
    deadline = start + args.timeout
    proc = subprocess.Popen(qemu, stdin=subprocess.DEVNULL)
    qmp = Qmp(qmp_path, time.monotonic() + 30)

    lines = []  # (host time, text)
    passed = failed = 0
    n = 0
    done = False
    stuck_since = None
    woken_by_host = 0
    host_wakeups = []  # host times of the safety net's system_wakeup
    shown = 0
    last_suspend = None

    def report(ok, text):
        nonlocal passed, failed, n
        n += 1
        if ok:
            passed += 1
        else:
            failed += 1
        print("%s %d - [%s] %s" % ("ok" if ok else "not ok", n, args.label, text), flush=True)

    with open(results, "rb") as rf:
        buf = b""
        while True:
            now = time.monotonic()
            chunk = rf.read()
            if chunk:
                buf += chunk
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    text = raw.decode(errors="replace").strip("\r")
                    if not text:
                        continue
                    lines.append((now, text))
                    if text.startswith("ok - "):
                        report(True, text[5:])
                    elif text.startswith("not ok - "):
                        report(False, text[9:])
                    elif args.live and text.startswith("demo: "):
                        print(text[6:], flush=True)
                    elif args.live and text.startswith("@"):
                        pass
                    elif args.live or text.startswith("# "):
                        print("# [%s] %s" % (args.label, text), flush=True)
                    if text == "@done":
                        done = True
            ev = qmp.snapshot()
            if args.live:
                for t, e in ev[shown:]:
                    if e == "SUSPEND":
                        print("host: QEMU reports the guest is now in S3 (QMP SUSPEND)", flush=True)
                        last_suspend = t
                    elif e == "WAKEUP":
                        print("host: QEMU reports the guest woke up after %.1f s in S3 (QMP WAKEUP)"
                              % (t - last_suspend if last_suspend else float("nan")), flush=True)
                shown = len(ev)
            # Safety net: a suspend nobody armed a wake alarm for.
            last = ev[-1] if ev else None
            if last and last[1] == "SUSPEND":
                if stuck_since is None:
                    stuck_since = last[0]
                elif now - stuck_since > args.stuck_wakeup:
                    qmp.command("system_wakeup")
                    woken_by_host += 1
                    host_wakeups.append(now)
                    print("# [%s] host: guest suspended for %.0f s, sent system_wakeup" %
                          (args.label, now - stuck_since), flush=True)
                    stuck_since = None
            else:
                stuck_since = None
            if proc.poll() is not None:
                break
            if now > deadline:
                print("# [%s] host: timeout after %.0f s, killing QEMU" % (args.label, now - start), flush=True)
                proc.kill()
                break
            time.sleep(0.05)

    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    events = qmp.snapshot()
    elapsed = time.monotonic() - start

    report(done, "guest ran all scenarios and reported @done (%.0f s wall)" % elapsed)

    # Files the guest sent as "@file NAME", "@data BASE64"..., "@endfile": kept
    # in the log dir as <label>-NAME; an SVG must be well-formed XML.
    current = None
    for _, text in lines:
        if text.startswith("@file "):
            current = (os.path.basename(text[6:].strip()), [])
        elif text.startswith("@data ") and current:
            current[1].append(text[6:].strip())
        elif text == "@endfile" and current:
            path = os.path.join(log_dir, "%s-%s" % (args.label, current[0]))
            try:
                with open(path, "wb") as f:
                    f.write(base64.b64decode("".join(current[1]), validate=True))
                report(True, "host: received %s from the guest (%s)" % (current[0], path))
            except (ValueError, OSError) as e:
                report(False, "host: received %s from the guest: %s" % (current[0], e))
                current = None
                continue
            if path.endswith(".svg"):
                x = subprocess.run(["xmllint", "--noout", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                report(x.returncode == 0, "host: xmllint --noout %s: the soak report's SVG is well-formed%s"
                       % (os.path.basename(path), "" if x.returncode == 0 else ": " + x.stdout.decode(errors="replace")))
            current = None

    marks = [(t, text.split(" ", 1)[1]) for t, text in lines if text.startswith("@mark ")]
    suspends = [t for t, e in events if e == "SUSPEND"]
    wakeups = [t for t, e in events if e == "WAKEUP"]

    def next_after(ts, t):
        for x in ts:
            if x >= t:
                return x
        return None

    # Marks: "release ..." are reported with host-measured timings;
    # "release-timed L" must be followed by a suspend within --release-limit;
    # between "hold-start L" and "hold-end L" no suspend may begin.
    for t, m in marks:
        if not m.startswith("release"):
            continue
        s = next_after(suspends, t)
        w = next_after(wakeups, s) if s is not None else None
        if s is None:
            print("# [%s] host: %s: no SUSPEND event after it" % (args.label, m), flush=True)
            if m.startswith("release-timed"):
                report(False, "host: %s: the guest suspended after the release" % m)
            continue
        asleep = (w - s) if w is not None else float("nan")
        print("# [%s] host: %s: suspended %.2f s after release, asleep %.2f s (QMP SUSPEND->WAKEUP)"
              % (args.label, m, s - t, asleep), flush=True)
        if m.startswith("release-locktimeout"):
            # A session that never locks: the lock step waits LockTimeoutSec, and no longer.
            lo, hi = args.lock_timeout - 0.2, args.lock_timeout + args.release_limit
            report(lo <= s - t <= hi,
                   "host: %s: suspended %.2f s after the release (LockTimeoutSec=%.1f, allowed %.1f-%.1f s)"
                   % (m.split(" ", 1)[-1], s - t, args.lock_timeout, lo, hi))
        if m.startswith("release-timed"):
            report(s - t <= args.release_limit,
                   "host: %s: suspended %.2f s after the release (limit %.1f s = 1 s + DelaySec)"
                   % (m.split(" ", 1)[-1], s - t, args.release_limit))

    # "idle-timed L": the last input event; the next suspend comes one idle
    # timeout later, plus the 1 s refresh interval and the guest's suspend
    # entry under TCG (seen: 2.8-3.0 s in all).
    # "grace-timed L": after the next suspend and RTC wake, the guest is left
    # alone and re-suspends after the resume grace.
    for t, m in marks:
        if m.startswith("idle-timed "):
            s = next_after(suspends, t)
            if s is None:
                report(False, "host: %s: a suspend followed the last input" % m)
                continue
            lat = s - t
            print("# [%s] host: idle-to-suspend latency %.2f s (IdleTimeoutSec=%.0f)" % (args.label, lat, args.idle_timeout),
                  flush=True)
            report(args.idle_timeout - 0.5 <= lat <= args.idle_timeout + 5.0,
                   "host: suspended %.2f s after the last input (IdleTimeoutSec=%.0f, allowed %.1f-%.1f s)"
                   % (lat, args.idle_timeout, args.idle_timeout - 0.5, args.idle_timeout + 5.0))
        if m.startswith("grace-timed "):
            s1 = next_after(suspends, t)
            w1 = next_after(wakeups, s1) if s1 is not None else None
            s2 = next_after(suspends, w1) if w1 is not None else None
            if s2 is None:
                report(False, "host: %s: suspend, RTC wake and re-suspend all seen" % m)
                continue
            g = s2 - w1
            print("# [%s] host: RTC wake to next suspend %.2f s (ResumeGraceSec=%.0f)" % (args.label, g, args.resume_grace),
                  flush=True)
            report(args.resume_grace - 0.5 <= g <= args.resume_grace + 2.5,
                   "host: after an RTC wake the guest re-suspended in %.2f s (ResumeGraceSec=%.0f, allowed %.1f-%.1f s)"
                   % (g, args.resume_grace, args.resume_grace - 0.5, args.resume_grace + 2.5))

    # "release-lock L" ... "locked L": the locker in the session got logind's
    # Lock (it sends "locked L") before the suspend that followed the release.
    lockeds = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("locked ")}
    for t, m in marks:
        if not m.startswith("release-lock "):
            continue
        label = m.split(" ", 1)[1]
        s = next_after(suspends, t)
        tl = lockeds.get(label)
        if s is None or tl is None:
            report(False, "host: %s: a lock (%s) and then a QMP SUSPEND after the release" % (label, tl is not None))
            continue
        report(t <= tl < s, "host: %s: the lock reached the session %.2f s after the release, %.2f s before QMP SUSPEND"
               % (label, tl - t, s - tl))

    starts = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("hold-start ")}
    for t_end, m in marks:
        if not m.startswith("hold-end "):
            continue
        label = m.split(" ", 1)[1]
        t_start = starts.get(label)
        if t_start is None:
            report(False, "host: hold %s ended without a start mark" % label)
            continue
        inside = [s for s in suspends if t_start <= s <= t_end]
        report(not inside, "host: no QMP SUSPEND event during the %.1f s hold (%s)" % (t_end - t_start, label))

    # The timers scenario: "timer-armed L" (the WakeSystem timer started, the
    # machine left alone), "job-start L" and "job-end L" (the job's first and
    # last line), "timer-done L". Its QMP timeline is printed for the record.
    armed = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("timer-armed ")}
    jstart = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("job-start ")}
    jend = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("job-end ")}
    tdone = {m.split(" ", 1)[1]: t for t, m in marks if m.startswith("timer-done ")}
    for label, ta in sorted(armed.items()):
        ts, te = jstart.get(label), jend.get(label)
        if ts is None or te is None:
            report(False, "host: timers %s: the job's start and end marks" % label)
            continue
        until = tdone.get(label, te + 30)
        timeline = ["%+.1f timer armed" % 0.0]
        timeline += ["%+.1f QMP %s" % (t - ta, e) for t, e in events if ta <= t <= until]
        timeline += ["%+.1f host system_wakeup" % (t - ta) for t in host_wakeups if ta <= t <= until]
        timeline += ["%+.1f job: first line" % (ts - ta), "%+.1f job: last line" % (te - ta)]
        timeline.sort(key=lambda x: float(x.split(" ", 1)[0]))
        print("# [%s] host: timers %s QMP timeline (s after the timer was armed): %s"
              % (args.label, label, "; ".join(timeline)), flush=True)
        s1 = next_after(suspends, ta)
        w1 = next_after(wakeups, s1) if s1 is not None else None
        report(s1 is not None and s1 < ts,
               "host: timers %s: QMP SUSPEND before the timer was due (%.1f s after arming, job at %.1f s)"
               % (label, (s1 - ta) if s1 else float("nan"), ts - ta))
        nudged = [t for t in host_wakeups if s1 is not None and s1 <= t <= ts]
        report(w1 is not None and w1 <= ts and not nudged,
               "host: timers %s: systemd's alarm woke the guest (QMP WAKEUP %.1f s after arming, no system_wakeup sent)"
               % (label, (w1 - ta) if w1 else float("nan")))
        inside = [t for t in suspends if ts <= t <= te]
        if label == "on":
            report(not inside, "host: timers on: no QMP SUSPEND during the job's %.1f s" % (te - ts))
            s2 = next_after(suspends, te)
            report(s2 is not None and s2 - te <= args.release_limit,
                   "host: timers on: QMP SUSPEND %.2f s after the job's end (limit %.1f s = DelaySec + 1 s)"
                   % ((s2 - te) if s2 else float("nan"), args.release_limit))
        else:
            report(bool(inside), "host: timers off: the job was frozen mid-way (%d QMP SUSPEND between its first "
                   "and last line): the scenario can fail" % len(inside))

    if woken_by_host:
        print("# [%s] host: woke the guest %d time(s) with system_wakeup" % (args.label, woken_by_host))
    print("# [%s] %d passed, %d failed; %d suspends, %d wakeups seen on QMP; console log: %s"
          % (args.label, passed, failed, len(suspends), len(wakeups), console), flush=True)
    if args.counts:
        with open(args.counts, "a") as f:
            f.write("%d %d\n" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
