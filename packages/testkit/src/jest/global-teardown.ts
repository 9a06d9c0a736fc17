/** Stops the run's broker: Ryuk may be disabled, so tests stop what they start. */
export default async function globalTeardown(): Promise<void> {
  const kafka = globalThis.__STATE_RELAY_KAFKA__;
  if (kafka) await kafka.stop();
}
