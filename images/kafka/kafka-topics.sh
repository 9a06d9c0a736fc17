#!/bin/bash
exec java -Xmx256m -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties -cp "/opt/kafka/libs/*" org.apache.kafka.tools.TopicCommand "$@"
