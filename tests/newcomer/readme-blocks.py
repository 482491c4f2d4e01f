#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The sh blocks of the README's "Install on a laptop" section, as printed.

  readme-blocks.py README KDEB     the script tests/newcomer/run.sh runs in a
                                   fresh root: every block in order, each
                                   followed by checks.sh's after_MARKER
  readme-blocks.py --block NAME README
                                   the block marked "vm: NAME", for the VM's
                                   readme scenario

A block's marker is the comment on the line before its fence,
<!-- newcomer: MARKER -->. "kernel" runs with --config-only and then takes
KDEB, the suite's own kernel package; "skip: REASON" is not run; "vm: NAME"
needs systemd as PID 1 and runs in the VM (tests/vm/guest/readme.sh).
"""
import re
import shlex
import sys


def blocks(path):
    text = open(path).read()
    m = re.search(r'^## Install on a laptop\n(.*?)(?=^## )', text, re.S | re.M)
    if not m:
        sys.exit("%s has no '## Install on a laptop' section" % path)
    found = [((b.group(1) or "").strip(), b.group(2))
             for b in re.finditer(r'(?:<!-- newcomer: (.*?) -->\n)?```sh\n(.*?)```', m.group(1), re.S)]
    if not found:
        sys.exit("no sh blocks in '## Install on a laptop' of %s" % path)
    return found


def fresh_root_script(path, kdeb):
    out = ["set -eo pipefail", ". /root/newcomer/checks.sh", "cd /root/autosleep",
           "trap 'echo \"not ok - README block $blk ($name) failed: exit $?\"' ERR"]
    for n, (marker, body) in enumerate(blocks(path), 1):
        first = body.strip().splitlines()[0]
        if marker.startswith("skip:"):
            out.append("echo %s" % shlex.quote("# README block %d skipped: %s (%s)" % (n, marker[5:].strip(), first)))
            continue
        if marker.startswith("vm:"):
            out.append("echo %s" % shlex.quote("# README block %d (%s) runs in the VM, with systemd as PID 1: "
                                               "tests/vm/guest/readme.sh (%s)" % (n, marker, first)))
            continue
        if marker == "kernel":
            if "build-kernel.sh --deb" not in body:
                sys.exit("the kernel block does not call build-kernel.sh --deb")
            body = body.replace("build-kernel.sh --deb", "build-kernel.sh --deb --config-only")
        name = marker or "unmarked"
        out.append("blk=%d name=%s" % (n, shlex.quote(name)))
        out.append("echo %s" % shlex.quote("# README block %d (%s): %s" % (n, name, first)))
        out.append(body.rstrip("\n"))
        out.append("echo \"ok - README block $blk ($name) ran\"")
        if marker:
            # Checks report; they do not stop the README's run.
            out.append("set +e; after_%s; set -e" % marker)
        if marker == "kernel":
            out.append("kdeb=%s  # the suite's knob kernel package, in place of the full build" % shlex.quote(kdeb))
    out.append("echo '# README: all blocks ran'")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--block":
        want = "vm: " + args[1]
        bodies = [body for marker, body in blocks(args[2]) if marker == want]
        if len(bodies) != 1:
            sys.exit("%s: %d blocks marked '%s', not one" % (args[2], len(bodies), want))
        sys.stdout.write(bodies[0])
    elif len(args) == 2:
        sys.stdout.write(fresh_root_script(*args))
    else:
        sys.exit(__doc__)


main()
