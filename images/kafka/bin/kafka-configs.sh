#!/bin/bash
# ConfigCommand moved from the core jar (kafka.admin, Scala) to kafka-tools in Kafka 4.0.
if compgen -G "/opt/kafka/libs/kafka_2.13-3.*.jar" >/dev/null; then
  exec "$(dirname "$0")/kafka-run-class.sh" kafka.admin.ConfigCommand "$@"
fi
exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.ConfigCommand "$@"
