#!/bin/bash
# The broker image's entry point.
#   kafka-run.sh broker   KAFKA_* env -> server.properties (the apache/kafka image's rule:
#                         KAFKA_ prefix, `_` -> `.`, `__` -> `_`, `___` -> `-`), format
#                         the storage once (CLUSTER_ID), then exec the broker JVM
#   kafka-run.sh ready    exit 0 once the INTERNAL listener (19092) accepts connections
set -euo pipefail

KAFKA_HOME=/opt/kafka
CONFIG=/tmp/server.properties
# JVM settings, not broker properties.
NOT_PROPERTIES=" KAFKA_HEAP_OPTS KAFKA_JVM_OPTS KAFKA_OPTS KAFKA_READY_PORT "

property_name() {
  local key="${1#KAFKA_}"
  key="${key//___/$'\x01'}"
  key="${key//__/$'\x02'}"
  key="${key//_/.}"
  key="${key//$'\x01'/-}"
  key="${key//$'\x02'/_}"
  echo "${key,,}"
}

java_argv() {  # main class; the quick JIT for the short-lived storage tool, as cluster.py
  local jvm
  if [[ "$1" == kafka.tools.StorageTool ]]; then jvm="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
  else jvm="${KAFKA_HEAP_OPTS:--Xms384m -Xmx384m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20"; fi
  # shellcheck disable=SC2206  # flags are words
  ARGV=(java $jvm ${KAFKA_JVM_OPTS:-} -Djava.awt.headless=true
        "-Dlog4j2.configurationFile=$KAFKA_HOME/log4j2.properties"
        -cp "$KAFKA_HOME/libs/*" "$1")
}

case "${1:-broker}" in
  ready)
    exec 3<>"/dev/tcp/127.0.0.1/${KAFKA_READY_PORT:-19092}"
    ;;
  broker)
    : "${CLUSTER_ID:?set CLUSTER_ID (kafka-storage random-uuid)}"
    : > "$CONFIG"
    while IFS='=' read -r name _; do
      [[ "$name" == KAFKA_* && "$NOT_PROPERTIES" != *" $name "* ]] || continue
      echo "$(property_name "$name")=${!name}" >> "$CONFIG"
    done < <(env)
    log_dirs="$(sed -n 's/^log\.dirs=//p' "$CONFIG")"
    if [[ ! -f "${log_dirs%%,*}/meta.properties" ]]; then
      java_argv kafka.tools.StorageTool
      "${ARGV[@]}" format -t "$CLUSTER_ID" -c "$CONFIG"
    fi
    java_argv kafka.Kafka
    exec "${ARGV[@]}" "$CONFIG"
    ;;
  *)
    echo "usage: kafka-run.sh broker|ready" >&2
    exit 2
    ;;
esac
