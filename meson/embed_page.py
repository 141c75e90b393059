#!/usr/bin/env python3
# embed_page.py HTML HEADER - the page of the demo's --trace=html,
# trace_page.html, as the C++ string trace_page_html, one raw string
# literal per line, as the Makefile's rule writes it.
import sys

with open(sys.argv[1], 'rb') as page:
    lines = page.read().split(b'\n')
if lines[-1] == b'':
    lines.pop()
with open(sys.argv[2], 'wb') as header:
    header.write(b'/* Made from trace_page.html by the build: do not edit. */\n')
    header.write(b'static const char trace_page_html[] =\n')
    for line in lines:
        header.write(b'R"trace_page(' + line + b'\n)trace_page"\n')
    header.write(b';\n')
