#!/bin/bash
# check-shared.sh LIB: the shared library LIB exports exactly the functions
# coroutine.h declares (COROUTINE_API), and needs no C++ runtime.
set -euo pipefail
lib=$1
header=$(dirname "$0")/../../coroutine.h
if ! diff -u --label "coroutine.h's functions" --label "exported by $lib" \
	<(sed -n 's/^COROUTINE_API .*\(coroutine_[a-z_]*\)(.*/\1/p' "$header" | sort) \
	<(nm -D --defined-only "$lib" | awk '{ print $NF }' | sort); then
	echo "$lib: the exported symbols differ from the API"
	exit 1
fi
if readelf -d "$lib" | grep NEEDED | grep -E 'libstdc\+\+|libc\+\+'; then
	echo "$lib needs the C++ runtime"
	exit 1
fi
echo "$lib: exports coroutine_* only, no C++ runtime"
