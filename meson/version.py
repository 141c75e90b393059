#!/usr/bin/env python3
# version.py HEADER - prints the version coroutine.h defines (1.0.0), for
# meson.build's project(): the version is written once, in coroutine.h.
# Python, not sed: Meson runs it with its own Python on every platform.
import re
import sys

with open(sys.argv[1]) as header:
    text = header.read()
parts = [re.search(r'^#define COROUTINE_VERSION_%s ([0-9]+)$' % part, text, re.M) for part in ('MAJOR', 'MINOR', 'PATCH')]
if None in parts:
    sys.exit('%s must define COROUTINE_VERSION_MAJOR, _MINOR and _PATCH' % sys.argv[1])
print('.'.join(part.group(1) for part in parts))
