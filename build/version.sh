#!/bin/sh
# Prints the release version of the checkout: the tag vX.Y.Z on HEAD as
# X.Y.Z, else 0.0.0-<commit> (12 hex digits); either with -dirty when the
# tree differs from HEAD (a tracked file changed, or an untracked file
# that is not ignored: go build and the chart would take it). It is a
# SemVer 2 version, as a Helm chart's version must be: a commit of only
# digits that starts with 0 would be an invalid pre-release, so it gets a
# g in front. Outside a git checkout it prints 0.0.0-unknown.
set -eu
cd "$(dirname "$0")/.."
if ! commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
	echo 0.0.0-unknown
	exit 0
fi
dirty=""
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	dirty=-dirty
fi
if tag=$(git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD 2>/dev/null); then
	echo "${tag#v}$dirty"
	exit 0
fi
case $commit in
0*) case $commit in *[!0-9]*) ;; *) commit=g$commit ;; esac ;;
esac
echo "0.0.0-$commit$dirty"
