#!/bin/bash
# Entrypoint of the locally built Kafka image. Honours the environment contract of the
# official apache/kafka image: every KAFKA_* variable (but the JVM ones) becomes a broker
# property (lowercase; "___" -> "-", "__" -> "_", "_" -> "."), CLUSTER_ID names the cluster,
# and with no KAFKA_* property at all it runs a single KRaft node on localhost:9092.
set -euo pipefail
KAFKA_HOME=/opt/kafka
props=/var/lib/kafka/server.properties
mkdir -p /var/lib/kafka

skip='^KAFKA_(HEAP_OPTS|OPTS|JVM_PERFORMANCE_OPTS|GC_LOG_OPTS|LOG4J_OPTS|JMX_OPTS|JMX_PORT|DEBUG|HOME|VERSION)='
user_props=$(env | grep '^KAFKA_' | grep -Ev "$skip" || true)

: >"$props"
if [ -z "$user_props" ]; then
  cat >>"$props" <<'DEF'
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.quorum.voters=1@localhost:9093
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
DEF
else
  while IFS='=' read -r name value; do
    key=${name#KAFKA_}
    key=$(echo "$key" | tr '[:upper:]' '[:lower:]' | sed -e 's/___/-/g' -e 's/__/@@/g' -e 's/_/./g' -e 's/@@/_/g')
    echo "$key=$value" >>"$props"
  done <<<"$user_props"
fi
grep -q '^log.dirs=' "$props" || echo "log.dirs=/var/lib/kafka/data" >>"$props"

cp="$KAFKA_HOME/libs/*"
# Kafka 4.x logs through log4j2 (its core jar is in libs), 3.x through log4j 1 / reload4j.
if compgen -G "$KAFKA_HOME/libs/log4j-core-*.jar" >/dev/null; then
  log4j_opts="-Dlog4j2.configurationFile=$KAFKA_HOME/config/log4j2.xml"
else
  log4j_opts="-Dlog4j.configuration=file:$KAFKA_HOME/config/log4j.properties"
fi
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-$log4j_opts}
jvm=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true $KAFKA_LOG4J_OPTS ${KAFKA_OPTS:-})

cluster=${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}
java "${jvm[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$cluster" -c "$props" --ignore-formatted >/dev/null
exec java "${jvm[@]}" -cp "$cp" kafka.Kafka "$props"
