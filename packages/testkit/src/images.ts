// Images are named in one place. The defaults are the official images; scripts/images.sh
// exports local equivalents (built from Debian, Maven Central and npm) where none can be pulled.
export const KAFKA_VERSION = '4.4.0';

export function kafkaImage(env: NodeJS.ProcessEnv = process.env): string {
  return env.KAFKA_IMAGE || `apache/kafka:${KAFKA_VERSION}`;
}
