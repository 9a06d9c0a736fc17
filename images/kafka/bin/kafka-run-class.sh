#!/bin/bash
# Runs a Kafka class with the image's jars and the tools' log configuration for this Kafka
# line: log4j2 where its core jar is in libs (Kafka 4.x), log4j 1 / reload4j otherwise (3.x).
#   kafka-run-class.sh CLASS ARGS...
KAFKA_HOME=/opt/kafka
if compgen -G "$KAFKA_HOME/libs/log4j-core-*.jar" >/dev/null; then
  log="-Dlog4j2.configurationFile=$KAFKA_HOME/config/tools-log4j2.xml"
else
  log="-Dlog4j.configuration=file:$KAFKA_HOME/config/tools-log4j.properties"
fi
exec java ${KAFKA_TOOLS_HEAP_OPTS:--Xmx256m} "$log" -cp "$KAFKA_HOME/libs/*" "$@"
