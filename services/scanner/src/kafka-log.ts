// The kafkajs→pino bridge moved to the service kit (createKafkaClient uses it); re-exported for
// the modules that import it from here.
export { kafkaLogCreator } from '@state-relay/service-kit';
