#!/bin/bash
# dump.sh REPO PATH...   print files (latest commit touching each), comments and blank lines stripped
r=$1; shift; g=/work/.mirror/${r/\//+}/repo
for p in "$@"; do c=$(git -C $g log -1 --format=%H --all --diff-filter=AM -- "$p"); echo "######## $r :: $p @ ${c:0:8}"; git -C $g show $c:"$p" | grep -v -E '^\s*#([^!S]|$)' | grep -v '^\s*$' | head -${N:-70}; done
